package mastra_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/telemetry"
)

// A signal's request to Mastra carries the traceparent of its client span, a child of
// the delivery's span, so Mastra continues the trace; the client's calls (aborts) carry
// one too. With tracing off none is sent.
func TestTraceparentToMastra(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("test").Start(context.Background(), "deliver mastra")
	d := agent.Handoff{Thread: thread, Signal: agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: "notification"},
		Behavior: agent.BehaviorWake}

	tg, err := mastra.New(config(srv.URL), mastra.WithTracerProvider(tp))
	require.NoError(t, err)
	_, err = tg.Deliver(ctx, d)
	require.NoError(t, err)
	sent := telemetry.SpanContext(<-got)
	require.Equal(t, span.SpanContext().TraceID(), sent.TraceID())
	require.Len(t, rec.Ended(), 1)
	post := rec.Ended()[0]
	require.Equal(t, "POST", post.Name())
	require.Equal(t, post.SpanContext().SpanID(), sent.SpanID())
	require.Equal(t, span.SpanContext().SpanID(), post.Parent().SpanID())

	client := mastra.NewClient([]agent.Config{config(srv.URL)}, httptarget.Traced(nil, tp))
	require.NoError(t, client.AbortThread(ctx, thread, false))
	require.Equal(t, span.SpanContext().TraceID(), telemetry.SpanContext(<-got).TraceID())

	off, err := mastra.New(config(srv.URL), mastra.WithTracerProvider(telemetry.Off()))
	require.NoError(t, err)
	_, err = off.Deliver(ctx, d)
	require.NoError(t, err)
	require.Empty(t, <-got, "tracing off adds no traceparent")
	span.End()
}
