package telemetry_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/telemetry/otlptest"
)

// cleanEnv blanks every variable Setup, the SDK or the exporters read, so the tests
// see only what they set (an empty variable counts as unset).
func cleanEnv(t *testing.T) {
	for _, k := range []string{
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
		"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
	} {
		t.Setenv(k, "")
	}
}

// collector is an OTLP/HTTP receiver that also keeps the headers of the requests.
type collector struct {
	*otlptest.Receiver
	URL     string
	mu      sync.Mutex
	headers []http.Header
}

func newCollector(t *testing.T) *collector {
	c := &collector{Receiver: otlptest.NewReceiver()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.headers = append(c.headers, r.Header.Clone())
		c.mu.Unlock()
		c.Receiver.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *collector) header(k string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, h := range c.headers {
		out = append(out, h.Values(k)...)
	}
	return out
}

// emit ends one span through tr's provider and flushes it (Shutdown waits for the export).
func emit(t *testing.T, tr *telemetry.Tracing, name string) trace.SpanContext {
	t.Helper()
	_, span := telemetry.Tracer(tr.Provider).Start(context.Background(), name)
	sc := span.SpanContext()
	span.End()
	require.NoError(t, tr.Shutdown(context.Background()))
	return sc
}

func TestSetupOffWithNothingSet(t *testing.T) {
	cleanEnv(t)
	for name, env := range map[string]map[string]string{
		"nothing set":        {},
		"sdk disabled":       {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
		"exporter none":      {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
		"only a sampler set": {"OTEL_TRACES_SAMPLER": "always_on", "OTEL_SERVICE_NAME": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			tr, err := telemetry.Setup(context.Background(), telemetry.Config{}, lookup, "")
			require.NoError(t, err)
			require.False(t, tr.Enabled())
			require.Equal(t, telemetry.Off(), tr.Provider, "the no-op provider")
			_, span := telemetry.Tracer(tr.Provider).Start(context.Background(), "x")
			require.False(t, span.SpanContext().IsValid(), "no context is made")
			require.NoError(t, tr.Shutdown(context.Background()))
		})
	}
	// The block's endpoint turns it on, but the kill switches still win.
	for _, off := range []map[string]string{{"OTEL_SDK_DISABLED": "true"}, {"OTEL_TRACES_EXPORTER": "none"}} {
		lookup := func(k string) (string, bool) { v, ok := off[k]; return v, ok }
		tr, err := telemetry.Setup(context.Background(), telemetry.Config{Traces: telemetry.TracesConfig{Endpoint: "http://collector:4318"}}, lookup, "")
		require.NoError(t, err)
		require.False(t, tr.Enabled(), "%v", off)
	}
}

func TestSetupRefusesWhatItCannotExport(t *testing.T) {
	cleanEnv(t)
	for env, want := range map[[2]string]string{
		{"OTEL_TRACES_EXPORTER", "zipkin"}:                             `OTEL_TRACES_EXPORTER: "zipkin" is not supported`,
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}:                   `OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" is not supported`,
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"}:              "OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL",
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://collector:4318"}: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http:// or https:// URL",
	} {
		lookup := func(k string) (string, bool) {
			if k == env[0] {
				return env[1], true
			}
			if k == "OTEL_TRACES_EXPORTER" {
				return "otlp", true
			}
			return "", false
		}
		_, err := telemetry.Setup(context.Background(), telemetry.Config{}, lookup, "")
		require.ErrorContains(t, err, want)
	}
}

// TestSetupExportsOverHTTP: the OTEL_* variables alone point the gateway at a
// collector; the block's keys win over them.
func TestSetupExportsOverHTTP(t *testing.T) {
	cleanEnv(t)
	c := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-env-key=env-value")
	tr, err := telemetry.Setup(context.Background(), telemetry.Config{}, os.LookupEnv, "1.2.3")
	require.NoError(t, err)
	require.True(t, tr.Enabled())
	sc := emit(t, tr, "from env")
	spans := c.Spans()
	require.Len(t, spans, 1)
	require.Equal(t, "from env", spans[0].Name)
	require.Equal(t, sc.TraceID().String(), spans[0].TraceID())
	require.Equal(t, "from-env", spans[0].Service)
	require.Equal(t, []string{"env-value"}, c.header("X-Env-Key"))

	c = newCollector(t)
	cfg := telemetry.Config{ServiceName: "from-config", Traces: telemetry.TracesConfig{
		Endpoint: c.URL, Headers: map[string]secret.Secret{"X-Api-Key": "config-value"},
	}}
	tr, err = telemetry.Setup(context.Background(), cfg, os.LookupEnv, "")
	require.NoError(t, err)
	emit(t, tr, "from config")
	spans = c.Spans()
	require.Len(t, spans, 1)
	require.Equal(t, "from-config", spans[0].Service, "the block's service_name wins")
	require.Equal(t, []string{"config-value"}, c.header("X-Api-Key"))
	require.Empty(t, c.header("X-Env-Key"), "the block's headers replace the variable's")

	// The default name, and the traces endpoint used as given.
	cleanEnv(t)
	c = newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.URL+"/v1/traces")
	tr, err = telemetry.Setup(context.Background(), telemetry.Config{}, os.LookupEnv, "")
	require.NoError(t, err)
	emit(t, tr, "default name")
	require.Equal(t, telemetry.DefaultServiceName, c.Spans()[0].Service)
}

// grpcCollector forwards what the OTLP/gRPC exporter sends to a Receiver.
type grpcCollector struct {
	collectortrace.UnimplementedTraceServiceServer
	rec *otlptest.Receiver
	md  chan metadata.MD
}

func (g *grpcCollector) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.md <- md
	g.rec.Add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func TestSetupExportsOverGRPC(t *testing.T) {
	cleanEnv(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := &grpcCollector{rec: otlptest.NewReceiver(), md: make(chan metadata.MD, 16)}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, g)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	// The block chooses gRPC.
	cfg := telemetry.Config{ServiceName: "grpc-config", Traces: telemetry.TracesConfig{
		Endpoint: "http://" + lis.Addr().String(), Protocol: telemetry.ProtocolGRPC,
		Headers: map[string]secret.Secret{"x-api-key": "config-value"},
	}}
	tr, err := telemetry.Setup(context.Background(), cfg, os.LookupEnv, "")
	require.NoError(t, err)
	sc := emit(t, tr, "over grpc")
	spans := g.rec.Spans()
	require.Len(t, spans, 1)
	require.Equal(t, sc.SpanID().String(), spans[0].SpanID())
	require.Equal(t, "grpc-config", spans[0].Service)
	require.Equal(t, []string{"config-value"}, (<-g.md).Get("x-api-key"))

	// The variables choose gRPC.
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-env-key=env-value")
	t.Setenv("OTEL_SERVICE_NAME", "grpc-env")
	tr, err = telemetry.Setup(context.Background(), telemetry.Config{}, os.LookupEnv, "")
	require.NoError(t, err)
	emit(t, tr, "over grpc from env")
	spans = g.rec.Spans()
	require.Len(t, spans, 2)
	require.Equal(t, "grpc-env", spans[1].Service)
	require.Equal(t, []string{"env-value"}, (<-g.md).Get("x-env-key"))
}

// underTrace starts a span whose remote parent has the trace id ending in last, unsampled:
// the trace id ratio sampler decides by the id alone (the low 8 bytes), so the outcome is known.
func underTrace(tr *telemetry.Tracing, last byte) trace.Span {
	var id trace.TraceID
	id[0] = 1
	for i := 8; i < 16; i++ {
		id[i] = last
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: id, SpanID: trace.SpanID{1}, Remote: true})
	_, span := telemetry.Tracer(tr.Provider).Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "child")
	return span
}

func TestSetupSamplers(t *testing.T) {
	cleanEnv(t)
	c := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)

	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	tr, err := telemetry.Setup(context.Background(), telemetry.Config{}, os.LookupEnv, "")
	require.NoError(t, err)
	require.True(t, tr.Enabled())
	sc := emit(t, tr, "dropped")
	require.True(t, sc.IsValid(), "context still propagates")
	require.False(t, sc.IsSampled())
	require.Zero(t, c.Count(), "always_off exports nothing (Shutdown flushed)")

	t.Setenv("OTEL_TRACES_SAMPLER", "traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0.5")
	tr, err = telemetry.Setup(context.Background(), telemetry.Config{}, os.LookupEnv, "")
	require.NoError(t, err)
	require.True(t, underTrace(tr, 0x00).SpanContext().IsSampled(), "a low trace id is under the ratio")
	require.False(t, underTrace(tr, 0xff).SpanContext().IsSampled(), "a high one is not")
	require.NoError(t, tr.Shutdown(context.Background()))

	// The block's sampler wins over the variables.
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	half := 0.5
	cfg := telemetry.Config{Traces: telemetry.TracesConfig{Sampler: telemetry.SamplerTraceIDRatio, SamplerArg: &half}}
	tr, err = telemetry.Setup(context.Background(), cfg, os.LookupEnv, "")
	require.NoError(t, err)
	require.True(t, underTrace(tr, 0x00).SpanContext().IsSampled())
	require.False(t, underTrace(tr, 0xff).SpanContext().IsSampled())
	require.NoError(t, tr.Shutdown(context.Background()))
	cfg.Traces = telemetry.TracesConfig{Sampler: telemetry.SamplerAlwaysOn}
	tr, err = telemetry.Setup(context.Background(), cfg, os.LookupEnv, "")
	require.NoError(t, err)
	require.True(t, emit(t, tr, "kept").IsSampled())
	require.Equal(t, 1, c.Count())
}

// BenchmarkSpanTracingOff is what instrumentation costs a gateway with tracing off: a
// span started, given attributes and ended through Off().
func BenchmarkSpanTracingOff(b *testing.B) {
	benchSpan(b, telemetry.Off())
}

// BenchmarkSpanTracingOn is the same through the SDK, every span sampled and batched to
// an exporter that drops them.
func BenchmarkSpanTracingOn(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	benchSpan(b, tp)
}

func benchSpan(b *testing.B, tp trace.TracerProvider) {
	tracer := telemetry.Tracer(tp)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, span := tracer.Start(ctx, "ingest")
		if span.IsRecording() {
			span.SetAttributes(connectorAttr)
		}
		_ = telemetry.Traceparent(c)
		span.End()
	}
}

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// TestOffKeepsTheContext: with tracing off a stored traceparent made the parent still
// goes out on requests (as with the SDK's no-op provider), and nothing else is added.
func TestOffKeepsTheContext(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx, span := telemetry.Tracer(telemetry.Off()).Start(telemetry.WithRemoteParent(context.Background(), tp), "deliver")
	defer span.End()
	require.False(t, span.IsRecording())
	require.False(t, span.SpanContext().IsValid())
	require.Equal(t, tp, telemetry.Traceparent(ctx))
	ctx, _ = telemetry.Tracer(telemetry.Off()).Start(context.Background(), "root")
	require.Empty(t, telemetry.Traceparent(ctx))
	allocs := testing.AllocsPerRun(100, func() {
		_, span := telemetry.Tracer(telemetry.Off()).Start(ctx, "x")
		span.End()
	})
	require.Zero(t, allocs)
}
