package delivery

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// A summary of many merged records links at most 128 spans, the pass among them: the
// SDK's limit, so no link the pass needs is dropped silently.
func TestTraceLinksBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := newTracing(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	var rs []inbox.Record
	for i := range 5 {
		r := inbox.Record{ID: fmt.Sprint("r", i), TraceParent: fmt.Sprintf("00-%032x-%016x-01", i+1, i+1)}
		for j := range inbox.MaxTraceLinks {
			r.TraceLinks = append(r.TraceLinks, fmt.Sprintf("00-%032x-%016x-01", 1000+i*100+j, 1000+i*100+j))
		}
		rs = append(rs, r)
	}
	ctx, pass := tr.startPass(context.Background(), 5)
	_, span := tr.startDeliver(ctx, agent.TargetStream, agent.Handoff{Signal: agent.Signal{ID: "s"}}, rs)
	endDeliver(span, true, false, "")
	endPass(pass, 5, nil)
	del := rec.Ended()[0]
	require.Len(t, del.Links(), maxLinks)
	require.Zero(t, del.DroppedLinks())
	last := del.Links()[maxLinks-1].SpanContext
	require.Equal(t, pass.SpanContext().SpanID(), last.SpanID(), "the pass is always linked")
}

// A signal of no record (the agent API's) is a child of the span it was sent in, and
// links no pass.
func TestTraceSignalWithoutRecords(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := newTracing(tp)
	ctx, api := tp.Tracer("test").Start(context.Background(), "POST /agents/:agent/threads/:thread/signals")
	ctx, span := tr.startDeliver(ctx, agent.TargetStream, agent.Handoff{Signal: agent.Signal{ID: "s"}}, nil)
	f := tr.traceFrame(ctx, agent.Frame{Event: agent.EventSignal, Signal: agent.Signal{Metadata: map[string]any{"k": "v"}}})
	endDeliver(span, true, false, "")
	api.End()
	del := rec.Ended()[0]
	require.Equal(t, api.SpanContext().SpanID(), del.Parent().SpanID())
	require.Empty(t, del.Links())
	require.Equal(t, del.SpanContext().TraceID(), trace.SpanContextFromContext(ctx).TraceID())
	require.Equal(t, "v", f.Signal.Metadata["k"])
	require.NotEmpty(t, f.Signal.Metadata[MetaTraceparent])
}
