package admin_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// snapshot counts what explain must never change.
func snapshot(t *testing.T, en *env) [3]int {
	reads := store.NewAdmin(en.st)
	t.Helper()
	ctx := context.Background()
	events, _, err := reads.ListEvents(ctx, inbox.EventFilter{Limit: inbox.MaxPageSize})
	require.NoError(t, err)
	recs, _, err := reads.ListRecords(ctx, inbox.RecordFilter{Limit: inbox.MaxPageSize})
	require.NoError(t, err)
	threads, _, err := reads.ListThreads(ctx, agent.ThreadFilter{Limit: inbox.MaxPageSize}, en.clock.Now())
	require.NoError(t, err)
	sum := 0
	for _, r := range recs {
		sum += r.CoalescedCount
	}
	return [3]int{len(events), sum, len(threads)}
}

func TestExplainCoalesceIntoPendingWhileActive(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		reads := store.NewAdmin(en.st)
		ctx := context.Background()
		orig := en.deliver("msg_1", invoice("acme", "Invoice 1 for ACME failed"))
		recs, _, err := reads.ListRecords(ctx, inbox.RecordFilter{EventID: orig.EventID})
		require.NoError(t, err)
		pending := recs[0]
		k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}
		_, _, err = store.NewRuns(en.st).OpenRun(ctx, agent.Run{ID: "run-1", Thread: k, Status: agent.RunOpen, Origin: agent.OriginAgent,
			OpenedAt: en.clock.Now(), LeaseUntil: en.clock.Now().Add(time.Hour)})
		require.NoError(t, err)
		before := snapshot(t, en)

		sample := map[string]any{
			"source": "generic", "connector": "billing",
			"headers": map[string]string{"webhook-id": "msg_9"},
			"body":    `{"kind":"invoice-failed","summary":"Invoice 2 for ACME failed","coalesceKey":"invoices:acme","attributes":{"customer":"acme"}}`,
		}
		var x admin.Explanation
		en.call(http.MethodPost, "/admin/v1/explain", sample, &x)
		require.Equal(t, en.clock.Now(), x.At)
		require.Equal(t, admin.ExplainedEvent{Source: "generic", Connector: "billing", Type: "invoice-failed", DeliveryID: "msg_9"}, x.Event)
		require.Empty(t, x.DuplicateOf)
		require.Equal(t, inbox.EventRouted, x.Status)
		require.Len(t, x.Items, 1)
		require.Equal(t, "invoice-failed", x.Items[0].Kind)
		require.Equal(t, inbox.PriorityMedium, x.Items[0].Priority, "the connector's default priority")
		require.Equal(t, map[string]any{"source": "generic", "connector": "billing", "kind": "invoice-failed",
			"extra": map[string]any{"customer": "acme"}}, x.Items[0].Fields)
		require.Equal(t, []admin.RouteResult{
			{Route: "billing", Item: 0, Matched: true, Thread: &k},
			{Route: "github-prs", Item: 0},
		}, x.Routes)

		require.Len(t, x.Notifications, 1)
		o := x.Notifications[0]
		require.Equal(t, "billing", o.Route)
		require.Equal(t, k, o.Thread)
		require.Equal(t, inbox.PresenceActive, o.Presence)
		require.Equal(t, "run-1", o.ActiveRun.RunID)
		require.NotNil(t, o.Merge)
		require.Equal(t, pending.ID, o.Merge.RecordID)
		require.Equal(t, "coalesceKey", o.Merge.On)
		require.Equal(t, 1, o.Merge.Record.CoalescedCount)
		require.Equal(t, inbox.ActionSummarize, o.Decision.Action, "medium priority, thread active")
		require.Equal(t, "default: medium priority, thread active → summary now, details stay in the inbox", o.Decision.Reason)
		require.Equal(t, pending.ID, o.Record.ID)
		require.Equal(t, 2, o.Record.CoalescedCount)
		require.Equal(t, "Invoice 2 for ACME failed", o.Record.Summary)

		require.Equal(t, before, snapshot(t, en), "explain writes nothing")
		got, err := reads.GetRecord(ctx, pending.ID)
		require.NoError(t, err)
		require.Equal(t, pending.Summary, got.Summary)

		// The same sample with the stored delivery id would be a redelivery.
		sample["headers"] = map[string]string{"Webhook-Id": "msg_1"}
		en.call(http.MethodPost, "/admin/v1/explain", sample, &x)
		require.Equal(t, orig.EventID, x.DuplicateOf)

		// A stored event explains as if it arrived now, with a read-only token.
		code, raw := en.do(http.MethodPost, "/admin/v1/explain", viewerToken, map[string]any{"eventId": orig.EventID})
		require.Equal(t, http.StatusOK, code, string(raw))
		require.Equal(t, before, snapshot(t, en))
	})
}

func TestExplainNewRecordAndRouteProblems(t *testing.T) {
	routes := append(billingRoutes(), connectors.RouteConfig{
		Name:   "billing-again",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"generic"}},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "billing", Thread: `{{index .Extra "customer"}}`},
	})
	policy := inbox.PolicyConfig{Rules: []inbox.Rule{{Match: inbox.RuleMatch{Kind: inbox.StringList{"invoice-failed"}},
		ActionSpec: inbox.ActionSpec{Action: inbox.ActionDefer, After: 10 * time.Minute}}}}
	en := newEnv(t, envOpts{routes: routes, policy: policy})

	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing",
		"body": map[string]any{"kind": "invoice-failed", "summary": "Invoice 3 failed", "attributes": map[string]any{"customer": "initech"}}}, &x)
	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "initech"}
	require.Equal(t, []admin.RouteResult{
		{Route: "billing", Matched: true, Thread: &k},
		{Route: "github-prs"},
		{Route: "billing-again", Matched: true, Thread: &k, SameThreadAs: "billing"},
	}, x.Routes)
	require.Len(t, x.Notifications, 1, "one notification per thread")
	o := x.Notifications[0]
	require.Nil(t, o.Merge)
	require.Equal(t, inbox.PresenceIdle, o.Presence)
	require.Equal(t, inbox.ActionDefer, o.Decision.Action)
	require.Equal(t, "rule[0] kind=invoice-failed → defer at 2026-11-02T09:10:00Z", o.Decision.Reason)
	require.Empty(t, o.Record.ID, "a new record")
	require.Equal(t, inbox.StatusPending, o.Record.Status)

	// No customer: both routes match, neither can name the thread.
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing",
		"bodyBase64": base64.StdEncoding.EncodeToString([]byte(`{"kind":"payout","summary":"x"}`))}, &x)
	require.Equal(t, inbox.EventUnrouted, x.Status)
	require.Equal(t, `route "billing": thread.thread rendered empty; route "billing-again": thread.thread rendered empty`, x.Reason)
	require.Equal(t, "thread.thread rendered empty", x.Routes[0].Error)
	require.True(t, x.Routes[0].Matched)
	require.Empty(t, x.Notifications)

	// What the connector cannot parse.
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": "[1]"}, &x)
	require.Equal(t, inbox.EventInvalid, x.Status)
	require.Equal(t, "body: want a JSON object", x.Reason)
	require.Empty(t, x.Items)
}

func TestExplainBadInput(t *testing.T) {
	en := newEnv(t, envOpts{})
	srcs := kindstest.Sources() // the kinds table's, as the API names them
	for _, c := range []struct {
		body any
		code int
		msg  string
	}{
		{`{`, http.StatusBadRequest, "request body: want a JSON object with eventId, or source, connector, headers and body"},
		{map[string]any{}, http.StatusBadRequest, "source: required (" + strings.Join(srcs[:len(srcs)-1], ", ") + " or " + srcs[len(srcs)-1] + "), or give eventId"},
		{map[string]any{"source": "jira", "connector": "x", "body": "{}"}, http.StatusBadRequest, `source: no connector parses "jira" events`},
		{map[string]any{"source": "generic", "body": "{}"}, http.StatusBadRequest, "connector: required: the configured connector name"},
		{map[string]any{"source": "generic", "connector": "billing"}, http.StatusBadRequest,
			"body: required (the raw body as a string, or the JSON document), or bodyBase64"},
		{map[string]any{"source": "generic", "connector": "billing", "bodyBase64": "%%%"}, http.StatusBadRequest, "bodyBase64: not valid base64"},
		{map[string]any{"eventId": "x", "source": "generic"}, http.StatusBadRequest, "eventId: give a stored event id or a sample event, not both"},
		{map[string]any{"eventId": "a\x01b"}, http.StatusBadRequest, "eventId: contains control characters"},
		{map[string]any{"eventId": "nope"}, http.StatusNotFound, `event "nope" not found`},
	} {
		code, raw := en.do(http.MethodPost, "/admin/v1/explain", opsToken, c.body)
		require.Equal(t, c.code, code, "%v: %s", c.body, raw)
		_, msg := errorOf(t, raw)
		require.Equal(t, c.msg, msg)
	}
}

// An explanation with no route results says why: the connector made nothing to route
// (routes exist), or no routes are configured.
func TestExplainSaysWhyNoRouteWasTried(t *testing.T) {
	explain := func(en *env, body any) admin.Explanation {
		var x admin.Explanation
		en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
		return x
	}
	sample := map[string]any{"kind": "invoice-failed", "summary": "x", "attributes": map[string]any{"customer": "acme"}}
	en := newEnv(t, envOpts{})
	x := explain(en, "not json")
	require.Equal(t, inbox.EventInvalid, x.Status)
	require.NotEmpty(t, x.Reason)
	require.Empty(t, x.Routes)
	require.Equal(t, "connector generic/billing produced nothing to route: it would be stored as invalid: "+x.Reason, x.RoutesNote)

	x = explain(en, sample)
	require.NotEmpty(t, x.Routes)
	require.Empty(t, x.RoutesNote)

	none := newEnv(t, envOpts{routes: []connectors.RouteConfig{}})
	require.Equal(t, "no routes are configured: add routes in config.yaml", explain(none, sample).RoutesNote)
	x = explain(none, "not json")
	require.Equal(t, "connector generic/billing produced nothing to route: it would be stored as invalid: "+x.Reason+
		" (and no routes are configured: add routes in config.yaml)", x.RoutesNote)
}
