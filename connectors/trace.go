package connectors

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

// Span attributes of the ingest path.
const (
	AttrConnector     = attribute.Key("signalgate.connector")
	AttrSecretSlot    = attribute.Key("signalgate.secret.slot")
	AttrEventType     = attribute.Key("signalgate.event.type")
	AttrItems         = attribute.Key("signalgate.items")
	AttrNotifications = attribute.Key("signalgate.notifications")
)

// startSpan starts a child of the span ctx runs under, with that span's provider (the
// server's, or the email worker's). Under no recording span (tracing off) it starts
// nothing and allocates nothing: the returned span is ctx's own, a no-op.
func startSpan(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return telemetry.Tracer(parent.TracerProvider()).Start(ctx, name, opts...)
}

// StartParse starts the "parse" span of a delivery, a child of ctx's span; EndParse
// ends it. The handler keeps ingesting under its own context, not the parse span's.
func StartParse(ctx context.Context) trace.Span {
	_, span := startSpan(ctx, "parse")
	return span
}

// EndParse ends a parse span with the event type and how many items it gave.
func EndParse(span trace.Span, eventType string, items int) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(AttrEventType.String(eventType), AttrItems.Int(items))
	span.End()
}
