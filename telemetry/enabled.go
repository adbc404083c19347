package telemetry

import (
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Enabled reports whether tp records spans: not nil, not Off() nor the SDK's no-op
// provider. A component given a provider installs its instrumentation only then, so
// with tracing off nothing of it runs.
func Enabled(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, offProvider, noop.TracerProvider, *noop.TracerProvider:
		return false
	}
	return true
}

// RecordingTracer is tp's signalgate tracer when tp records spans, nil when tracing is
// off: a component keeps it and skips its instrumentation on nil.
func RecordingTracer(tp trace.TracerProvider) trace.Tracer {
	if !Enabled(tp) {
		return nil
	}
	return Tracer(tp)
}
