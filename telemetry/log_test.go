package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/telemetry"
)

var connectorAttr = attribute.String("signalgate.connector", "github")

func TestLogHandlerAddsTheSpanOfTheContext(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	lines := func() []map[string]any {
		var out []map[string]any
		for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(l, &m))
			out = append(out, m)
		}
		buf.Reset()
		return out
	}

	ctx, span := telemetry.Tracer(tp).Start(context.Background(), "verify")
	log.InfoContext(ctx, "inside")
	log.Info("no context")
	span.End()
	log.InfoContext(context.Background(), "outside")
	log.InfoContext(context.WithoutCancel(telemetry.WithRemoteParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")), "remote")

	got := lines()
	require.Len(t, got, 4)
	require.Equal(t, span.SpanContext().TraceID().String(), got[0]["trace_id"])
	require.Equal(t, span.SpanContext().SpanID().String(), got[0]["span_id"])
	require.Equal(t, "test", got[0]["component"])
	for _, l := range got[1:3] {
		require.NotContains(t, l, "trace_id", l["msg"])
		require.NotContains(t, l, "span_id", l["msg"])
	}
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", got[3]["trace_id"])
	require.Equal(t, "00f067aa0ba902b7", got[3]["span_id"])

	// Off: nothing added.
	ctx, span = telemetry.Tracer(telemetry.Off()).Start(context.Background(), "verify")
	log.InfoContext(ctx, "off")
	span.End()
	require.NotContains(t, lines()[0], "trace_id")
}
