package reply

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

// WithTracerProvider makes every send attempt a "reply {source}" span of tp (default:
// tracing off). A reply keeps no trace of its own, so each attempt starts a trace; the
// senders' requests under it carry no traceparent to the platforms.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Service) { s.tracer, s.traced = telemetry.Tracer(tp), telemetry.Enabled(tp) }
}

// startSend starts the span of one send attempt of r.
func (s *Service) startSend(ctx context.Context, r Reply) (context.Context, trace.Span) {
	if !s.traced {
		return ctx, nil
	}
	return s.tracer.Start(ctx, "reply "+r.To.Source, trace.WithNewRoot(), trace.WithAttributes(
		attribute.String("signalgate.reply.id", r.ID), attribute.String("signalgate.thread", r.Thread.String()),
		attribute.String("signalgate.reply.connector", r.To.Connector), attribute.Int("signalgate.reply.attempt", r.Attempts+1)))
}

// send runs one claimed reply's attempt (attempt) in its span.
func (s *Service) send(ctx context.Context, r Reply, claimed time.Time) error {
	ctx, span := s.startSend(ctx, r)
	err := s.attempt(ctx, r, claimed)
	if span != nil {
		if err != nil {
			span.SetStatus(codes.Error, "reply attempt not recorded")
		}
		span.End()
	}
	return err
}

// traceOutcome puts the outcome finish records on the attempt's span of ctx.
func traceOutcome(ctx context.Context, o Outcome) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("signalgate.reply.status", string(o.Status)))
	if o.Status == StatusFailed {
		span.SetStatus(codes.Error, o.Error) // redacted
	} else if o.Error != "" {
		span.SetAttributes(attribute.String("signalgate.reply.error", o.Error)) // retried; redacted
	}
}
