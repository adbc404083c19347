package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/telemetry"
)

func TestConfigValidateNamesTheKey(t *testing.T) {
	ratio := func(f float64) *float64 { return &f }
	require.NoError(t, telemetry.Config{}.Validate())
	require.NoError(t, telemetry.Config{ServiceName: "gw", TraceURL: "https://jaeger.example/trace/{trace_id}", Traces: telemetry.TracesConfig{
		Endpoint: "http://collector:4317", Protocol: "grpc", Insecure: true, Timeout: time.Second,
		Headers: map[string]secret.Secret{"x-api-key": "k"}, Sampler: "parentbased_traceidratio", SamplerArg: ratio(0.25),
	}}.Validate())
	const leaked = "s3cr3t-value"
	for _, c := range []struct {
		cfg  telemetry.Config
		want string
	}{
		{telemetry.Config{TraceURL: "https://jaeger.example/trace/"}, "trace_url: must contain {trace_id}"},
		{telemetry.Config{TraceURL: "javascript:alert({trace_id})"}, "trace_url: must be an absolute http or https URL"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Protocol: "http/json"}}, "traces.protocol: must be http/protobuf or grpc"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Endpoint: "collector:4318"}}, "traces.endpoint: must be an http:// or https:// URL"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Endpoint: "https://u:" + leaked + "@collector"}}, "traces.endpoint: must not carry credentials"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Endpoint: "https://collector", Insecure: true}}, "traces.insecure: conflicts with the https endpoint"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Headers: map[string]secret.Secret{"bad name": leaked}}}, `traces.headers: "bad name" is not a valid header name`},
		{telemetry.Config{Traces: telemetry.TracesConfig{Headers: map[string]secret.Secret{"x-key": leaked + "\r\nx: y"}}}, "traces.headers.x-key: value must not contain line breaks"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Timeout: -time.Second}}, "traces.timeout: must not be negative"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Sampler: "sometimes"}}, `traces.sampler: unknown "sometimes" (want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio)`},
		{telemetry.Config{Traces: telemetry.TracesConfig{Sampler: "traceidratio", SamplerArg: ratio(1.5)}}, "traces.sampler_arg: must be a ratio between 0 and 1"},
		{telemetry.Config{Traces: telemetry.TracesConfig{Sampler: "always_on", SamplerArg: ratio(0.5)}}, "traces.sampler_arg: only for sampler traceidratio or parentbased_traceidratio"},
		{telemetry.Config{Traces: telemetry.TracesConfig{SamplerArg: ratio(0.5)}}, "traces.sampler_arg: only for sampler"},
	} {
		err := c.cfg.Validate()
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), leaked)
	}
}

func TestSetupOnWithTheOTLPExporterNamed(t *testing.T) {
	cleanEnv(t)
	lookup := func(k string) (string, bool) {
		if k == "OTEL_TRACES_EXPORTER" {
			return "otlp", true
		}
		return "", false
	}
	tr, err := telemetry.Setup(context.Background(), telemetry.Config{}, lookup, "")
	require.NoError(t, err)
	require.True(t, tr.Enabled(), "the exporter's default endpoint")
	require.NoError(t, tr.Shutdown(context.Background()))
}

func TestDescribeNeverShowsCredentials(t *testing.T) {
	lookup := func(k string) (string, bool) {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return "https://user:pw-in-url@collector.example", true
		}
		return "", false
	}
	got, err := telemetry.Describe(telemetry.Config{}, lookup)
	require.NoError(t, err)
	require.Equal(t, "OTLP http/protobuf to https://user:xxxxx@collector.example/v1/traces", got)
	got, err = telemetry.Describe(telemetry.Config{}, nil)
	require.NoError(t, err)
	require.Equal(t, "off", got)
}
