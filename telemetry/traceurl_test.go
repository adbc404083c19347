package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/telemetry"
)

func TestTraceURL(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	require.Equal(t, "https://jaeger.example/trace/"+id,
		telemetry.TraceURL("https://jaeger.example/trace/{trace_id}", id))
	require.Equal(t, "https://t.example/?a="+id+"&b="+id,
		telemetry.TraceURL("https://t.example/?a={trace_id}&b={trace_id}", id), "every placeholder")
	require.Empty(t, telemetry.TraceURL("", id), "no template: no link")
	require.Empty(t, telemetry.TraceURL("https://t.example/{trace_id}", ""), "no trace: no link")
	// A hostile id cannot change the path or add a query.
	require.Equal(t, "https://t.example/trace/..%2Fadmin%3Fx=1",
		telemetry.TraceURL("https://t.example/trace/{trace_id}", "../admin?x=1"))
}
