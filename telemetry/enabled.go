package telemetry

import (
	"reflect"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Enabled reports whether tp records spans: not nil, not Off() nor the SDK's no-op
// provider. A component given a provider installs its instrumentation only then, so
// with tracing off nothing of it runs.
func Enabled(tp trace.TracerProvider) bool {
	if tp == nil {
		return false
	}
	if _, ok := tp.(noop.TracerProvider); ok {
		return false
	}
	// Off's provider holds no state: its type is its identity.
	return reflect.TypeOf(tp) != reflect.TypeOf(Off())
}
