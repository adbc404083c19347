package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/signalgate/signalgate/telemetry"
)

func TestEnabled(t *testing.T) {
	require.False(t, telemetry.Enabled(nil))
	require.False(t, telemetry.Enabled(telemetry.Off()))
	require.False(t, telemetry.Enabled(noop.NewTracerProvider()))
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	require.True(t, telemetry.Enabled(tp))
}

func TestRecordingTracerIsNilWhenOff(t *testing.T) {
	require.Nil(t, telemetry.RecordingTracer(telemetry.Off()))
	require.Nil(t, telemetry.RecordingTracer(nil))
	require.NotNil(t, telemetry.RecordingTracer(sdktrace.NewTracerProvider()))
}
