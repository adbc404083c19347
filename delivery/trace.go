package delivery

import (
	"context"
	"maps"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/telemetry"
)

// WithTracerProvider traces dispatch passes, deliveries and stream publishes with tp
// (default telemetry.Off(): nothing is recorded, frames carry no traceparent).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(d *Dispatcher) { d.trace = newTracing(tp) }
}

// MetaTraceparent is the signal frame metadata key of the deliver span's traceparent,
// so a stream subscriber continues the trace.
const MetaTraceparent = "traceparent"

// maxLinks bounds a span's links: the SDK's default limit, so none is dropped silently.
const maxLinks = 128

// Span attribute keys of the delivery side.
const (
	attrThreads   = attribute.Key("signalgate.dispatch.threads")
	attrRecords   = attribute.Key("signalgate.dispatch.records")
	attrKind      = attribute.Key("signalgate.target.kind")
	attrSignalID  = attribute.Key("signalgate.signal.id")
	attrSignalTyp = attribute.Key("signalgate.signal.type")
	attrNRecords  = attribute.Key("signalgate.records")
	attrThread    = attribute.Key("signalgate.thread")
	attrAttempt   = attribute.Key("signalgate.delivery.attempt")
	attrStatus    = attribute.Key("signalgate.delivery.status")
	attrRetry     = attribute.Key("signalgate.delivery.retry")
)

// tracing is the dispatcher's tracer; on is false with tracing off, and then nothing
// below builds a span or touches a frame.
type tracing struct {
	on     bool
	tracer trace.Tracer
}

func newTracing(tp trace.TracerProvider) tracing {
	return tracing{on: telemetry.Enabled(tp), tracer: telemetry.Tracer(tp)}
}

// startPass starts the root span of a pass that has work over threads.
func (t tracing) startPass(ctx context.Context, threads int) (context.Context, trace.Span) {
	if !t.on || threads == 0 {
		return ctx, nil
	}
	return t.tracer.Start(ctx, "dispatch pass", trace.WithNewRoot(), trace.WithAttributes(attrThreads.Int(threads)))
}

// endPass ends a pass span with the records its threads had due.
func endPass(span trace.Span, records int64, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(attrRecords.Int64(records))
	if err != nil {
		span.SetStatus(codes.Error, "dispatch pass failed")
	}
	span.End()
}

// startDeliver starts the span of one delivery attempt of del to a target of kind. A
// signal of one record continues that record's trace (the event that made it), linking
// the events merged into it; a summary or a signal of several records starts a trace of
// its own linking every record's events. Both link the pass they went out in (the span
// of ctx, if any). A signal of no record (the agent API's) is a child of the span of ctx.
func (t tracing) startDeliver(ctx context.Context, kind string, del agent.Handoff, records []inbox.Record) (context.Context, trace.Span) {
	if !t.on {
		return ctx, nil
	}
	var links []trace.Link
	pass := trace.SpanContextFromContext(ctx)
	room := maxLinks
	if pass.IsValid() {
		room--
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	switch {
	case len(records) == 0:
		pass = trace.SpanContext{} // the parent, not a pass
	case len(records) == 1 && telemetry.SpanContext(records[0].TraceParent).IsValid():
		ctx = telemetry.WithRemoteParent(ctx, records[0].TraceParent)
		links = telemetry.Links(records[0].TraceLinks, room)
	default:
		opts = append(opts, trace.WithNewRoot())
		var tps []string
		for _, r := range records {
			tps = append(tps, r.TraceParent)
			tps = append(tps, r.TraceLinks...)
		}
		links = telemetry.Links(tps, room)
	}
	if pass.IsValid() {
		links = append(links, trace.Link{SpanContext: pass})
	}
	opts = append(opts, trace.WithLinks(links...), trace.WithAttributes(
		attrKind.String(kind), attrSignalID.String(del.Signal.ID), attrSignalTyp.String(string(del.Signal.Type)),
		attrNRecords.Int(len(del.RecordIDs)), attrThread.String(del.Thread.String()), attrAttempt.Int(del.Attempt)))
	return t.tracer.Start(ctx, "deliver "+kind, opts...)
}

// endDeliver ends a deliver span: delivered, or failed and whether it is retried
// (errMsg is the redacted error).
func endDeliver(span trace.Span, delivered, retry bool, errMsg string) {
	if span == nil {
		return
	}
	status := OutcomeDelivered
	if !delivered {
		status = OutcomeFailed
		span.SetStatus(codes.Error, errMsg)
	}
	span.SetAttributes(attrStatus.String(status), attrRetry.Bool(retry))
	span.End()
}

// traceFrame puts the traceparent of the deliver span of ctx on f's metadata, which is
// stored with the frame: a subscriber catching up from the log gets it too.
func (t tracing) traceFrame(ctx context.Context, f agent.Frame) agent.Frame {
	if !t.on {
		return f
	}
	tp := telemetry.Traceparent(ctx)
	if tp == "" {
		return f
	}
	meta := maps.Clone(f.Signal.Metadata) // the signal's map is shared with its item
	if meta == nil {
		meta = map[string]any{}
	}
	meta[MetaTraceparent] = tp
	f.Signal.Metadata = meta
	return f
}

// publish hands frames to subscribers, inside a "publish stream" producer span per
// signal frame of a stream target, each a child of the deliver span its metadata names.
func (t tracing) publish(kind string, frames []agent.Frame, hand func()) {
	if !t.on || kind != agent.TargetStream {
		hand()
		return
	}
	var spans []trace.Span
	for _, f := range frames {
		tp, _ := f.Signal.Metadata[MetaTraceparent].(string)
		sc := telemetry.SpanContext(tp)
		if f.Event != agent.EventSignal || !sc.IsValid() {
			continue
		}
		_, span := t.tracer.Start(trace.ContextWithSpanContext(context.Background(), sc), "publish stream",
			trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
				semconv.MessagingSystemKey.String("signalgate"), semconv.MessagingOperationTypeSend,
				semconv.MessagingDestinationName("stream"), attrThread.String(f.Thread.String()), attrSignalID.String(f.ID)))
		spans = append(spans, span)
	}
	hand()
	for _, s := range spans {
		s.End()
	}
}
