package a2a_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/a2a"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/telemetry"
)

// sentHeaders records the traceparent of every request the agent's client sends.
type sentHeaders struct {
	mu   sync.Mutex
	sent []string // method path traceparent
	tp   []string
}

func (s *sentHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.sent = append(s.sent, r.Method+" "+r.URL.Path)
	s.tp = append(s.tp, r.Header.Get("traceparent"))
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// With tracing on, every request to an A2A agent (its card, each send, each poll) is a
// client span whose traceparent goes with it, as the gateway's calls to every target do.
func TestTraceparentToA2A(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	wire := &sentHeaders{}
	e := newEnv(t, envOpts{path: "echo", noPush: true, hc: httptarget.Traced(&http.Client{Transport: wire}, tp)})
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "traced"}
	e.note(k, inbox.PriorityUrgent, "CI failed on main")
	woke := e.waitSignals(k, 1)[0]
	require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))
	e.state(k, a2a.StateCompleted)

	wire.mu.Lock()
	defer wire.mu.Unlock()
	require.NotEmpty(t, wire.sent)
	require.Contains(t, wire.sent, "POST /echo/jsonrpc")
	for i, h := range wire.tp {
		require.True(t, telemetry.SpanContext(h).IsValid(), "%s carries a traceparent", wire.sent[i])
	}
	require.NotEmpty(t, rec.Ended(), "a client span per request")
}
