package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/telemetry"
)

// The gateway's tracer provider reaches the dispatcher and the webhook target: the
// target's request carries the traceparent of its client span, a child of the deliver
// span, and the span shows no part of the URL's path (a token here).
func TestTracesReachTheWebhookTarget(t *testing.T) {
	const pathSecret = "PATHSENTINEL-9f3e1c"
	got := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Get("traceparent")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
agents:
  - id: hooky
    token: trace-agent-token-0123456789
    target: { kind: webhook, url: %q, secret: %q }
`, filepath.Join(dir, "gw.db"), hook.URL+"/hooks/"+pathSecret, outageSecret)), 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	rec := tracetest.NewSpanRecorder()
	delivered := make(chan struct{}, 4)
	m := New(cfg, slog.New(slog.DiscardHandler))
	m.Traces = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithSpanProcessor(onEnd{name: "deliver webhook", c: delivered}))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()

	req, err := http.NewRequest(http.MethodPost, "http://"+m.Addr().String()+"/v1/agents/hooky/threads/r/t/notifications",
		strings.NewReader(`{"kind":"deploy","summary":"Deploy failed","priority":"urgent"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer trace-agent-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	select {
	case <-delivered: // its client span ended first
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook target was never called")
	}
	sent := telemetry.SpanContext(<-got)
	require.True(t, sent.IsValid(), "the request carries a traceparent")
	var post, deliver sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch {
		case s.Name() == "POST" && s.SpanContext().SpanID() == sent.SpanID():
			post = s
		case s.Name() == "deliver webhook":
			deliver = s
		}
	}
	require.NotNil(t, post, "the header is the client span's")
	require.NotNil(t, deliver)
	require.Equal(t, deliver.SpanContext().SpanID(), post.Parent().SpanID())
	for _, a := range post.Attributes() {
		require.NotContains(t, a.Value.Emit(), pathSecret)
	}
}

// onEnd tells c when a span named name ends.
type onEnd struct {
	name string
	c    chan struct{}
}

func (p onEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p onEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == p.name {
		select {
		case p.c <- struct{}{}:
		default:
		}
	}
}
func (p onEnd) Shutdown(context.Context) error   { return nil }
func (p onEnd) ForceFlush(context.Context) error { return nil }
