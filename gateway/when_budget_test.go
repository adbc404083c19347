package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/condition/conditiontest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// The attacker's 117 KB body (two 30,000-item arrays) against a fair `when`, through
// the real webhook path at the default budget: the sender gets its answer, the route
// and the rule do not match, the event and the record say why, the metric counts the
// event at each place, and explain shows the same.
func TestWhenBudgetOnIngest(t *testing.T) {
	m := startMain(t, `
admin: { tokens: [ { name: ops, token: "`+hostileAdminToken+`", scopes: [read, write] } ] }
connectors:
  generic: [ { name: billing, secret: "`+billingSecret+`" } ]
routes:
  - name: all
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: all }
  - name: unblocked
    match: { source: generic, when: '`+conditiontest.ScanWhen+`' }
    thread: { agent: coder, resource: billing, thread: unblocked }
policy:
  rules:
    - when: '`+conditiontest.ScanWhen+`'
      action: discard
`)
	code, out := postGeneric(t, m, "scan-1", conditiontest.ScanBomb(), true)
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, "routed", out["status"], "routed by the route without a when")
	require.EqualValues(t, 1, out["records"])

	ev, err := store.NewExplain(m.Store).GetEvent(context.Background(), out["eventId"].(string))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(ev.Error, `route "unblocked": when "`+conditiontest.ScanWhen+`": expression budget exceeded: `), ev.Error)
	recs, err := store.NewRecords(m.Store).ThreadRecords(context.Background(), inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "all"})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.NotEqual(t, inbox.StatusDiscarded, recs[0].Status, "the discard rule did not match")
	require.Contains(t, recs[0].Reason, `(rule[0] not matched: when "`+conditiontest.ScanWhen+`": expression budget exceeded: `)

	resp, err := http.Get("http://" + m.Addr().String() + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(metrics), `signalgate_expression_budget_exceeded_total{place="route"} 1`)
	require.Contains(t, string(metrics), `signalgate_expression_budget_exceeded_total{place="policy"} 1`)

	sample, err := json.Marshal(map[string]any{"eventId": ev.ID})
	require.NoError(t, err)
	var x admin.Explanation
	require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodPost, "/admin/v1/explain", hostileAdminToken, sample, &x))
	require.Len(t, x.Routes, 2)
	require.Contains(t, x.Routes[1].Error, "expression budget exceeded")
	require.Contains(t, x.Reason, `route "unblocked": `)
	require.Len(t, x.Notifications, 1)
	require.Contains(t, x.Notifications[0].Decision.Reason, "rule[0] not matched: ")
}
