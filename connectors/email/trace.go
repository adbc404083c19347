package email

import (
	"context"
	"net"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

// Span attributes of a fetch round.
const (
	attrMailbox  = attribute.Key("signalgate.mailbox")
	attrMessages = attribute.Key("signalgate.messages")
	attrUID      = attribute.Key("signalgate.imap.uid")
)

// WithTracing makes an "imap fetch" span of every fetch round that finds mail, each
// message's ingest a child of it. A nil or no-op provider (telemetry.Off) records nothing.
func WithTracing(tp trace.TracerProvider) Option {
	return func(p *Poller) {
		p.tracer = telemetry.RecordingTracer(tp)
	}
}

// startFetch starts the span of a fetch round of n messages: a new trace, as mail
// carries no context the gateway could believe. ctx unchanged and a nil span when
// tracing is off.
func (w *worker) startFetch(ctx context.Context, n int) (context.Context, trace.Span) {
	if w.p.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{attrMailbox.String(w.mailbox), attrMessages.Int(n)}
	if host, port, err := net.SplitHostPort(w.p.cfg.Addr); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if pn, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(pn))
		}
	}
	return w.p.tracer.Start(ctx, "imap fetch", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
}

// startMessage starts the span one message is ingested under (its event's and records'
// traceparent), a child of the fetch round's.
func (w *worker) startMessage(ctx context.Context, uid uint32) (context.Context, trace.Span) {
	if w.p.tracer == nil {
		return ctx, nil
	}
	return w.p.tracer.Start(ctx, "ingest message", trace.WithAttributes(attrMailbox.String(w.mailbox), attrUID.Int64(int64(uid))))
}

// endSpan ends span (nil: tracing off), failed with err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "fetch failed")
	}
	span.End()
}
