package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestCollectCountsSpansOfARealExporter points the SDK's own OTLP/HTTP exporter at
// `loadgen collect` and checks the count it answers on /count and prints when stopped.
func TestCollectCountsSpansOfARealExporter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- collect(ctx, ln, &out) }()

	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(ln.Addr().String()), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(64)))
	tr := tp.Tracer("loadgen-test")
	const spans = 300
	for range spans / 3 {
		ctx, parent := tr.Start(context.Background(), "parent")
		for range 2 {
			_, child := tr.Start(ctx, "child")
			child.End()
		}
		parent.End()
	}
	// Shutdown exports what is queued before it returns.
	require.NoError(t, tp.Shutdown(context.Background()))

	resp, err := http.Get("http://" + ln.Addr().String() + "/count")
	require.NoError(t, err)
	var got collectCount
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	require.Equal(t, spans, got.Spans)

	resp, err = http.Post("http://"+ln.Addr().String()+"/v1/traces", "application/x-protobuf", bytes.NewReader([]byte("not protobuf")))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "garbage is refused, not counted")

	stop()
	require.NoError(t, <-done)
	require.JSONEq(t, `{"spans":300}`, out.String())
}

func TestCollectListensOnLoopbackOnly(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, run(context.Background(), []string{"collect", "--listen", "0.0.0.0:4318"}, &bytes.Buffer{}, &stderr))
	require.Contains(t, stderr.String(), "only loopback")
	require.NoError(t, loopbackAddr("127.0.0.1:0"))
	require.NoError(t, loopbackAddr("localhost:4318"))
	require.Error(t, loopbackAddr("4318"))
}

func TestParsePIDs(t *testing.T) {
	got, err := parsePIDs("12, 34")
	require.NoError(t, err)
	require.Equal(t, []int{12, 34}, got)
	got, err = parsePIDs("")
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = parsePIDs("12,x")
	require.ErrorContains(t, err, `"x" is not a pid`)
	_, err = parsePIDs("-1")
	require.Error(t, err)
}
