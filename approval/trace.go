package approval

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

// startSpan starts an approval's span (name "approval request" or "approval decide"),
// a child of the span of ctx when there is one (the agent API's request, the Slack
// click's); nil with tracing off.
func (s *Service) startSpan(ctx context.Context, name, id string) (context.Context, trace.Span) {
	if !telemetry.Enabled(s.Traces) {
		return ctx, nil
	}
	return telemetry.Tracer(s.Traces).Start(ctx, name, trace.WithAttributes(attribute.String("signalgate.approval.id", id)))
}

// traceApproval puts what a's span shows on the span of ctx.
func traceApproval(ctx context.Context, a Approval) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("signalgate.thread", a.ThreadKey.String()), attribute.String("signalgate.approval.kind", a.Kind),
		attribute.String("signalgate.approval.origin", a.Origin), attribute.String("signalgate.approval.status", string(a.Status)))
	if a.PostError != "" {
		span.SetStatus(codes.Error, "approval not posted")
	}
}

// endSpan ends span (nil: tracing off), an error status when err is set.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
