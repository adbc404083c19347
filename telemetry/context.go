// Package telemetry carries signalgate's traces: the OpenTelemetry provider the gateway
// exports with (configured by the standard OTEL_* variables and the telemetry: block),
// and the W3C trace context that crosses every hop — stored with events and records,
// sent on outbound requests, put on stream frames.
//
// Nothing here is global: components take a trace.TracerProvider (a no-op one when
// tracing is off) and the propagator is W3C Trace Context alone.
package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// ScopeName is the instrumentation scope every signalgate tracer uses.
const ScopeName = "github.com/signalgate/signalgate"

// Off is the provider of a gateway with tracing off: its spans are no-ops that record
// nothing and carry no context. Starting one allocates nothing: the context comes back
// as it was (so a remote parent in it still propagates, as with the SDK's no-op
// provider).
func Off() trace.TracerProvider { return offProvider{} }

type offProvider struct{ embedded.TracerProvider }

func (offProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return offTracer{} }

type offTracer struct{ embedded.Tracer }

func (offTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	return ctx, offSpan{}
}

// offSpan is an empty struct so that returning it as a trace.Span does not allocate.
type offSpan struct{ embedded.Span }

func (offSpan) End(...trace.SpanEndOption)              {}
func (offSpan) AddEvent(string, ...trace.EventOption)   {}
func (offSpan) AddLink(trace.Link)                      {}
func (offSpan) IsRecording() bool                       { return false }
func (offSpan) RecordError(error, ...trace.EventOption) {}
func (offSpan) SpanContext() trace.SpanContext          { return trace.SpanContext{} }
func (offSpan) SetStatus(codes.Code, string)            {}
func (offSpan) SetName(string)                          {}
func (offSpan) SetAttributes(...attribute.KeyValue)     {}
func (offSpan) TracerProvider() trace.TracerProvider    { return offProvider{} }

// Tracer is tp's signalgate tracer; nil tp means tracing is off.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = Off()
	}
	return tp.Tracer(ScopeName)
}

var traceContext = propagation.TraceContext{}

// Traceparent is the W3C traceparent of the span in ctx ("00-<trace>-<span>-<flags>");
// empty when ctx carries no valid span context (tracing off).
func Traceparent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// SpanContext parses a stored or received traceparent; the zero (invalid) span context
// when tp is empty or malformed.
func SpanContext(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := traceContext.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

// WithRemoteParent returns ctx with tp as the remote parent of the next span started
// from it; ctx unchanged when tp is not a valid traceparent.
func WithRemoteParent(ctx context.Context, tp string) context.Context {
	sc := SpanContext(tp)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// Extract reads the traceparent (and tracestate) of an incoming request's headers into
// ctx. Only a caller that has verified the request may continue its trace.
func Extract(ctx context.Context, h http.Header) context.Context {
	return traceContext.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes the span context of ctx to outbound headers as traceparent (and
// tracestate); nothing when ctx carries none.
func Inject(ctx context.Context, h http.Header) {
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
}

// Links turns traceparents into span links, skipping empty and malformed ones, at most
// max of them (max <= 0: all).
func Links(tps []string, max int) []trace.Link {
	var links []trace.Link
	for _, tp := range tps {
		if max > 0 && len(links) >= max {
			break
		}
		if sc := SpanContext(tp); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return links
}
