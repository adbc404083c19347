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
