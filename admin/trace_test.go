package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/telemetry"
)

const (
	tracedID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tracedTP = "00-" + tracedID + "-00f067aa0ba902b7-01"
)

// A record and an event that arrived in a trace link to it with the operator's
// template; without a template there is no link, the trace id stays.
func TestTraceLinks(t *testing.T) {
	en := newEnv(t, envOpts{})
	raw, err := json.Marshal(invoice("acme", "Invoice failed"))
	require.NoError(t, err)
	ev := &inbox.Event{Source: "generic", Connector: "billing", DeliveryID: "d-traced", Body: raw,
		Headers: map[string]string{"Webhook-Id": "d-traced", "Content-Type": "application/json"}}
	items, err := en.generic.Items(context.Background(), ev)
	require.NoError(t, err)
	ev.Type = items[0].Kind
	// The request's span as the server would have it.
	ctx := telemetry.WithRemoteParent(context.Background(), tracedTP)
	out, err := connectors.NewPipeline(en.deps.Router, en.inbox, nil).Ingest(ctx, ev, items)
	require.NoError(t, err)
	page, err := en.api.Notifications(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, page.Notifications, 1)
	id := page.Notifications[0].ID

	get := func(target string) map[string]any {
		code, body := en.do(http.MethodGet, target, viewerToken, nil)
		require.Equal(t, http.StatusOK, code, string(body))
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m))
		return m
	}
	rec, evd := get("/admin/v1/notifications/"+id), get("/admin/v1/events/"+out.EventID)
	require.Equal(t, tracedID, rec["traceId"])
	require.Equal(t, tracedID, evd["traceId"])
	require.NotContains(t, rec, "traceUrl", "no template, no link")
	require.NotContains(t, evd, "traceUrl")

	deps := en.deps
	deps.TraceURL = "https://traces.example/trace/{trace_id}?from=signalgate"
	en.api = en.newAPI(deps)
	rec, evd = get("/admin/v1/notifications/"+id), get("/admin/v1/events/"+out.EventID)
	require.Equal(t, "https://traces.example/trace/"+tracedID+"?from=signalgate", rec["traceUrl"])
	require.Equal(t, "https://traces.example/trace/"+tracedID+"?from=signalgate", evd["traceUrl"])
}
