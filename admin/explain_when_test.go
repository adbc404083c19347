package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// Explain names the expression that made a route match (or not) and the rule whose
// `when` decided, evaluated over the event's body as `payload`.
func TestExplainShowsWhen(t *testing.T) {
	routes := []connectors.RouteConfig{{
		Name:   "big-invoices",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}, When: `payload.attributes.amount > 1000`},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "billing", Thread: `{{index .Extra "customer"}}`},
	}}
	policy := inbox.PolicyConfig{Rules: []inbox.Rule{
		{When: `presence == "active" && priority == "medium"`, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDefer, After: 30 * time.Minute}},
		{When: `payload.kind == "invoice-failed" && thread.id == "initech"`, ActionSpec: inbox.ActionSpec{Action: inbox.ActionSummarize}},
	}}
	en := newEnv(t, envOpts{routes: routes, policy: policy})
	before := snapshot(t, en)

	var x admin.Explanation
	body := map[string]any{"kind": "invoice-failed", "summary": "Invoice 3 failed", "attributes": map[string]any{"customer": "initech", "amount": 5000}}
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "initech"}
	require.Equal(t, []admin.RouteResult{{Route: "big-invoices", Matched: true, Thread: &k, When: `payload.attributes.amount > 1000`}}, x.Routes)
	require.Len(t, x.Notifications, 1)
	require.Equal(t, inbox.ActionSummarize, x.Notifications[0].Decision.Action)
	require.Equal(t, `rule[1] when payload.kind == "invoice-failed" && thread.id == "initech" → summarize`, x.Notifications[0].Decision.Reason)

	body["attributes"] = map[string]any{"customer": "initech", "amount": 10}
	x = admin.Explanation{}
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
	require.Equal(t, []admin.RouteResult{{Route: "big-invoices", When: `payload.attributes.amount > 1000`}}, x.Routes)
	require.Empty(t, x.Notifications)
	require.Equal(t, before, snapshot(t, en), "explain writes nothing")
}
