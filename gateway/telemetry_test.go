package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/telemetry/otlptest"
)

func TestTelemetryBlockValidationNamesTheKeys(t *testing.T) {
	const header = "hdr-secret-0123456789"
	got := problems(t, minimal+`
telemetry:
  trace_url: "https://jaeger.example/trace/"
  traces:
    endpoint: "collector:4318"
    protocol: http/json
    headers: { "x api key": "${OTLP_KEY}" }
    sampler: sometimes
    sampler_arg: 2
    bogus: 1
`, env("CODER_TOKEN", "a-long-enough-token", "OTLP_KEY", header))
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"telemetry.traces.bogus: unknown key",
		"telemetry.trace_url: must contain {trace_id}",
		"telemetry.traces.endpoint: must be an http:// or https:// URL",
		"telemetry.traces.protocol: must be http/protobuf or grpc",
		`telemetry.traces.headers: "x api key" is not a valid header name`,
		`telemetry.traces.sampler: unknown "sometimes"`,
	} {
		require.Contains(t, joined, want)
	}
	require.NotContains(t, joined, header, "header values are secrets")
	require.Equal(t, []string{"telemetry.traces.sampler_arg: must be a ratio between 0 and 1, got 2"},
		problems(t, minimal+"telemetry: { traces: { sampler: traceidratio, sampler_arg: 2 } }\n", env("CODER_TOKEN", "a-long-enough-token")))

	cfg, err := ParseConfig("t.yaml", []byte(minimal+`
telemetry:
  service_name: gw-eu
  trace_url: "https://jaeger.example/trace/{trace_id}"
  traces: { endpoint: "https://otlp.example", protocol: grpc, headers: { x-api-key: "${OTLP_KEY}" }, timeout: 5s, sampler: parentbased_traceidratio, sampler_arg: 0.1 }
`), env("CODER_TOKEN", "a-long-enough-token", "OTLP_KEY", header))
	require.NoError(t, err)
	require.Equal(t, "https://jaeger.example/trace/{trace_id}", cfg.Telemetry.TraceURL)
	require.Equal(t, header, cfg.Telemetry.Traces.Headers["x-api-key"].Reveal())
	require.Contains(t, cfg.Secrets(), header, "redacted like every credential")
}

func TestReloadRefusesTelemetryChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	good := billingRoutedTo(billingSecret, "invoices", "")
	writeReloadConfig(t, path, sqliteStorage(dir), good+`
telemetry: { trace_url: "https://a.example/trace/{trace_id}" }
`)
	m := startReloadable(t, path)
	writeReloadConfig(t, path, sqliteStorage(dir), good+`
telemetry: { trace_url: "https://b.example/trace/{trace_id}", traces: { headers: { x-api-key: hdr-secret-0123456789 } } }
`)
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "telemetry.trace_url: cannot change while the gateway runs")
	require.Contains(t, body, "telemetry.traces: cannot change while the gateway runs")
	require.NotContains(t, body, "hdr-secret-0123456789")
	require.Error(t, <-m.TestSignals.Reloaded.C())
	require.Equal(t, "https://a.example/trace/{trace_id}", m.Config().Telemetry.TraceURL)
}

// TestOpenExportsAndCloseFlushes: the block turns tracing on for every component given
// m.Traces, and Close sends what is still queued.
func TestOpenExportsAndCloseFlushes(t *testing.T) {
	rec := otlptest.NewReceiver()
	collector := httptest.NewServer(rec)
	t.Cleanup(collector.Close)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), `
telemetry: { service_name: gw-test, traces: { endpoint: "`+collector.URL+`" } }
`)
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	m.Lookup = noEnv
	require.NoError(t, m.Open(context.Background()))
	require.True(t, telemetry.Enabled(m.Traces))
	_, span := telemetry.Tracer(m.Traces).Start(context.Background(), "probe")
	span.End()
	require.NoError(t, m.Close())
	spans := otlptest.Named(rec.Spans(), "probe")
	require.Len(t, spans, 1)
	require.Equal(t, "gw-test", spans[0].Service)

	// Nothing set: off; a provider given before Open is kept.
	cfg.Telemetry = telemetry.Config{}
	m = New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	require.False(t, telemetry.Enabled(m.Traces))
	require.NoError(t, m.Close())
	mine := sdktrace.NewTracerProvider()
	m = New(cfg, storetest.Logger(t))
	m.Traces = mine
	require.NoError(t, m.Open(context.Background()))
	require.Same(t, mine, m.Traces)
	require.NoError(t, m.Close())
}

func TestLogLinesCarryTheTrace(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(LogConfig{Level: "info", Format: "json"}, &buf)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	ctx, span := telemetry.Tracer(tp).Start(context.Background(), "verify")
	log.InfoContext(ctx, "verified", "component", "github")
	span.End()
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.Equal(t, span.SpanContext().TraceID().String(), line["trace_id"])
	require.Equal(t, span.SpanContext().SpanID().String(), line["span_id"])
}

// The shipped config's commented telemetry example loads once uncommented.
func TestShippedTelemetryExampleLoads(t *testing.T) {
	raw, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "\n# telemetry:\n")
	require.True(t, ok)
	block := []string{"telemetry:"}
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "#   ") {
			break
		}
		block = append(block, strings.TrimPrefix(line, "# "))
	}
	cfg, err := ParseConfig("t.yaml", []byte(minimal+strings.Join(block, "\n")+"\n"), env("CODER_TOKEN", "a-long-enough-token", "OTLP_API_KEY", "k"))
	require.NoError(t, err)
	require.Equal(t, "http://otel-collector:4318", cfg.Telemetry.Traces.Endpoint)
	require.Equal(t, "parentbased_traceidratio", cfg.Telemetry.Traces.Sampler)
}

// The tracing page's telemetry example loads as written.
func TestDocTelemetryExampleLoads(t *testing.T) {
	doc, err := os.ReadFile("../docs/telemetry.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\ntelemetry:")
	require.True(t, ok)
	block, _, _ := strings.Cut(rest, "```")
	cfg, err := ParseConfig("t.yaml", []byte(minimal+"telemetry:"+block), env("CODER_TOKEN", "a-long-enough-token", "OTLP_API_KEY", "k"))
	require.NoError(t, err)
	require.Equal(t, telemetry.ProtocolGRPC, cfg.Telemetry.Traces.Protocol)
}
