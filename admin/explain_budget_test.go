package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/condition/conditiontest"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// Explain runs expressions under the same budget as ingest: the attacker's 117 KB body
// is answered, and the route and the rule that ran out say so.
func TestExplainWhenOverBudget(t *testing.T) {
	en := newEnv(t, envOpts{})
	still := condition.Limits{Now: func() time.Time { return t0 }} // only the steps can run out
	r, err := connectors.NewRouter([]connectors.RouteConfig{
		{Name: "all", Match: connectors.RouteMatch{Source: inbox.StringList{"generic"}},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "billing", Thread: "all"}},
		{Name: "unblocked", Match: connectors.RouteMatch{When: conditiontest.ScanWhen},
			Thread: connectors.ThreadConfig{Agent: "coder", Resource: "billing", Thread: "unblocked"}},
	}, []string{"coder", "support"}, connectors.WithExpressionLimits(still))
	require.NoError(t, err)
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{Rules: []inbox.Rule{
		{When: conditiontest.ScanWhen, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDiscard}},
	}}, inbox.WithExpressionLimits(still))
	require.NoError(t, err)
	en.deps.Router, en.deps.Policy = r, pol
	en.api = en.newAPI(en.deps)

	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing",
		"body": json.RawMessage(conditiontest.ScanBomb())}, &x)
	over := `when "any(payload.items, {# in payload.blocked})": expression budget exceeded: more than 1000000 steps`
	require.Len(t, x.Routes, 2)
	require.True(t, x.Routes[0].Matched)
	require.Equal(t, admin.RouteResult{Route: "unblocked", When: conditiontest.ScanWhen, Error: over}, x.Routes[1])
	require.Equal(t, inbox.EventRouted, x.Status)
	require.Equal(t, `route "unblocked": `+over, x.Reason)
	require.Len(t, x.Notifications, 1)
	d := x.Notifications[0].Decision
	require.Equal(t, inbox.ActionDeliver, d.Action, "the discard rule did not match")
	require.True(t, strings.HasSuffix(d.Reason, "(rule[0] not matched: "+over+")"), d.Reason)
}
