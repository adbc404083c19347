package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/telemetry/otlptest"
)

// traceE2E is a gateway exporting over OTLP/HTTP (its real exporter, configured by the
// telemetry block) to a receiver decoding the official protobuf types.
type traceE2E struct {
	m    *Gateway
	rcv  *otlptest.Receiver
	hook chan http.Header // requests the webhook target received
}

func startTraceE2E(t *testing.T) *traceE2E {
	t.Helper()
	// Export every 50 ms instead of every 5 s: the test waits on what arrives, not on time.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	e := &traceE2E{rcv: otlptest.NewReceiver(), hook: make(chan http.Header, 8)}
	collector := httptest.NewServer(e.rcv)
	t.Cleanup(collector.Close)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		e.hook <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(target.Close)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
admin: { tokens: [ { name: ops, token: %q, scopes: [read, write] } ] }
telemetry:
  service_name: gateway-under-test
  traces: { endpoint: %q }
  trace_url: "https://traces.example/trace/{trace_id}"
agents:
  - { id: coder, token: dev-only-coder-token }
  - id: hooky
    token: hooky-agent-token-0123
    target: { kind: webhook, url: %q, secret: %q }
connectors:
  github: [ { name: acme, secret: %q } ]
  generic: [ { name: billing, secret: %q } ]
routes:
  - name: ci
    match: { source: github, connector: acme }
    thread: { agent: coder, resource: repo, thread: ci }
  - name: ledger
    match: { source: generic, connector: billing, when: 'kind == "ledger-failed"' }
    thread: { agent: hooky, resource: billing, thread: ledger }
  - name: billing
    match: { source: generic, connector: billing, when: 'kind != "ledger-failed"' }
    thread: { agent: coder, resource: billing, thread: invoices }
`, filepath.Join(dir, "gw.db"), silenceAdminToken, collector.URL, target.URL, outageSecret, watchGitHubSecret, billingSecret), 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	e.m = New(cfg, storetest.Logger(t))
	require.NoError(t, e.m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, e.m.Close()) })
	return e
}

// senderTrace is a traceparent as a sender that traces its own webhooks sends it.
func senderTrace(n int) string {
	return fmt.Sprintf("00-%032x-%016x-01", 0x4bf92f3577b34da6+n, 0x00f067aa0ba902b7+n)
}

// spansOf waits until the trace has a span named last, and returns the trace's spans.
func (e *traceE2E) spansOf(t *testing.T, traceID, last string) []otlptest.Span {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait) // only bounds a broken test
	defer cancel()
	inTrace := func(all []otlptest.Span) []otlptest.Span {
		var out []otlptest.Span
		for _, s := range all {
			if s.TraceID() == traceID {
				out = append(out, s)
			}
		}
		return out
	}
	all, err := e.rcv.WaitFor(ctx, func(all []otlptest.Span) bool { return len(otlptest.Named(inTrace(all), last)) > 0 })
	require.NoError(t, err)
	return inTrace(all)
}

func one(t *testing.T, spans []otlptest.Span, name string) otlptest.Span {
	t.Helper()
	got := otlptest.Named(spans, name)
	require.Len(t, got, 1, "spans named %q", name)
	return got[0]
}

// One GitHub check failure, from the sender's traced webhook to the stream frame the
// agent reads: every span in the sender's trace, in the tree the issue names.
func TestTraceOfACheckFailureFromWebhookToStreamFrame(t *testing.T) {
	e := startTraceE2E(t)
	frames := openStream(t, e.m, "/v1/agents/coder/threads/repo/ci/stream")

	var failure map[string]any
	for _, raw := range octokitExamples(t, "check_run") {
		m := map[string]any{}
		require.NoError(t, json.Unmarshal(raw, &m))
		if m["action"] == "completed" && m["check_run"].(map[string]any)["conclusion"] == "failure" {
			failure = m
			break
		}
	}
	require.NotNil(t, failure, "the octokit examples have a failed check run")
	sender := senderTrace(0)
	traceID := inbox.TraceIDOf(sender)
	body := jsonOf(t, failure)
	req, err := http.NewRequest(http.MethodPost, "http://"+e.m.Addr().String()+"/webhooks/github/acme", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex([]byte(watchGitHubSecret), body))
	req.Header.Set("X-GitHub-Event", "check_run")
	req.Header.Set("X-GitHub-Delivery", "trace-check-1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", sender)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	frame := nextFrame(t, frames)
	meta, _ := frame["metadata"].(map[string]any)
	framed := telemetry.SpanContext(fmt.Sprint(meta["traceparent"]))
	require.True(t, framed.IsValid(), "the frame carries metadata.traceparent: %v", meta)
	require.Equal(t, traceID, framed.TraceID().String(), "the frame is in the sender's trace")

	spans := e.spansOf(t, traceID, "publish stream")
	srv := one(t, spans, "POST /webhooks/github/:connector")
	require.Equal(t, sender[36:52], srv.ParentSpanID(), "the verified webhook continues the sender's span")
	require.Equal(t, "gateway-under-test", srv.Service)
	require.Equal(t, "200", srv.Attr("http.response.status_code"))
	require.Equal(t, "/webhooks/github/:connector", srv.Attr("http.route"))
	var children []string
	for _, c := range otlptest.Children(spans, srv) {
		children = append(children, c.Name)
	}
	require.Subset(t, children, []string{"verify", "parse", "route", "INSERT events", "deliver stream"})
	require.Equal(t, "acme", one(t, spans, "verify").Attr("signalgate.connector"))
	store := one(t, spans, "INSERT events")
	require.Equal(t, "sqlite", store.Attr("db.system.name"))
	decide := one(t, spans, "decide")
	require.Equal(t, store.SpanID(), decide.ParentSpanID())
	require.Equal(t, "deliver", decide.Attr("signalgate.decision.action"))
	require.NotEmpty(t, decide.Attr("signalgate.decision.reason"))
	deliver := one(t, spans, "deliver stream")
	require.Equal(t, "delivered", deliver.Attr("signalgate.delivery.status"))
	require.Equal(t, deliver.SpanID(), framed.SpanID().String(), "the frame carries the deliver span")
	publish := one(t, spans, "publish stream")
	require.Equal(t, deliver.SpanID(), publish.ParentSpanID())

	// The record keeps the trace, and the admin API links to it.
	var recs struct {
		Items []map[string]any `json:"notifications"`
	}
	require.Equal(t, http.StatusOK, adminCall(t, e.m, http.MethodGet, "/admin/v1/notifications?agent=coder", nil, &recs))
	require.NotEmpty(t, recs.Items)
	id := fmt.Sprint(recs.Items[0]["id"])
	var detail map[string]any
	require.Equal(t, http.StatusOK, adminCall(t, e.m, http.MethodGet, "/admin/v1/notifications/"+id, nil, &detail))
	require.Equal(t, traceID, detail["traceId"])
	require.Equal(t, "https://traces.example/trace/"+traceID, detail["traceUrl"])
}

// A summary of three held events links to each event's span: its trace shows every
// webhook it summarises.
func TestTraceOfASummaryLinksItsThreeEvents(t *testing.T) {
	e := startTraceE2E(t)
	var sil silence.Silence
	require.Equal(t, http.StatusCreated, adminCall(t, e.m, http.MethodPost, "/admin/v1/silences", map[string]any{
		"matchers": []map[string]any{{"name": "thread", "value": "invoices"}},
		"endsAt":   time.Now().Add(2 * time.Hour).Format(time.RFC3339), "createdBy": "ops", "comment": "migration"}, &sil))

	var events []string // the server spans' traceparents, as the records keep them
	for i := range 3 {
		body := fmt.Appendf(nil, `{"kind":"invoice-failed","summary":"Invoice %d failed","priority":"high","dedupeKey":"inv-%d"}`, i, i)
		code, out := postGenericTraced(t, e.m, fmt.Sprintf("msg_sum_%d", i), body, senderTrace(10+i))
		require.Equal(t, http.StatusOK, code, out)
		events = append(events, inbox.TraceIDOf(senderTrace(10+i)))
	}
	frames := openStream(t, e.m, "/v1/agents/coder/threads/billing/invoices/stream")
	require.Equal(t, http.StatusOK, adminCall(t, e.m, http.MethodDelete, "/admin/v1/silences/"+sil.ID, nil, nil))
	frame := nextFrame(t, frames)
	meta, _ := frame["metadata"].(map[string]any)
	summary := telemetry.SpanContext(fmt.Sprint(meta["traceparent"]))
	require.True(t, summary.IsValid(), "the summary's frame carries its trace: %v", frame)

	spans := e.spansOf(t, summary.TraceID().String(), "deliver stream")
	deliver := one(t, spans, "deliver stream")
	require.Empty(t, deliver.ParentSpanId, "a summary starts its own trace")
	require.Equal(t, "3", deliver.Attr("signalgate.records"))
	linked := map[string]bool{}
	for _, l := range deliver.Links {
		linked[fmt.Sprintf("%x", l.TraceId)] = true
	}
	for i, id := range events {
		require.True(t, linked[id], "the summary links event %d's trace", i)
		srv := one(t, e.spansOf(t, id, "POST /webhooks/generic/:connector"), "POST /webhooks/generic/:connector")
		found := false
		for _, l := range deliver.Links {
			found = found || fmt.Sprintf("%x", l.SpanId) == srv.SpanID()
		}
		require.True(t, found, "the link points at event %d's server span", i)
	}
}

// A webhook target's request carries traceparent, in the trace of the event it delivers.
func TestTraceparentOnAWebhookTargetsRequest(t *testing.T) {
	e := startTraceE2E(t)
	sender := senderTrace(20)
	code, out := postGenericTraced(t, e.m, "msg_ledger", []byte(`{"kind":"ledger-failed","summary":"Ledger sync failed","priority":"urgent"}`), sender)
	require.Equal(t, http.StatusOK, code, out)
	var got http.Header
	select {
	case got = <-e.hook:
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("the webhook target was never called")
	}
	sent := telemetry.SpanContext(got.Get("traceparent"))
	require.True(t, sent.IsValid(), "the request carries traceparent")
	require.Equal(t, inbox.TraceIDOf(sender), sent.TraceID().String())

	spans := e.spansOf(t, sent.TraceID().String(), "deliver webhook")
	var client otlptest.Span
	for _, s := range otlptest.Named(spans, "POST") {
		if s.SpanID() == sent.SpanID().String() {
			client = s
		}
	}
	require.NotNil(t, client.Span, "the header is the client span's")
	deliver := one(t, spans, "deliver webhook")
	require.Equal(t, deliver.SpanID(), client.ParentSpanID())
	srv := one(t, spans, "POST /webhooks/generic/:connector")
	require.Equal(t, srv.SpanID(), deliver.ParentSpanID(), "the delivery stays in the event's trace")
	require.False(t, strings.Contains(client.Attr("url.full"), "?"), "no query in url.full")
}

// postGenericTraced is postGeneric with the sender's traceparent.
func postGenericTraced(t *testing.T, m *Gateway, id string, body []byte, traceparent string) (int, map[string]any) {
	t.Helper()
	return postGenericSigned(t, m, id, body, true, http.Header{"Traceparent": {traceparent}})
}
