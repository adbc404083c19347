package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/secret"
)

// DefaultServiceName is service.name when neither the block nor OTEL_SERVICE_NAME names one.
const DefaultServiceName = "signalgate"

// Tracing is the gateway's tracer provider and what flushes it at shutdown.
type Tracing struct {
	// Provider is given to every component: Off() when tracing is off.
	Provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider
}

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.sdk != nil }

// Shutdown exports the spans still queued and stops the exporter; ctx bounds the wait.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Setup builds the tracer provider from the block and the OTEL_* variables, read
// through lookup. Tracing is on when the block sets an endpoint, when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, or when
// OTEL_TRACES_EXPORTER=otlp; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none
// turn it off whatever else is set. Off, it returns Off() and nothing runs.
//
// The block's keys win over the variables. The endpoint and protocol are read through
// lookup, as the decision is; what else the block leaves unset, the SDK and the
// exporters read from the process environment themselves (headers, timeout,
// certificates, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_BSP_*).
// version, when not empty, is service.version.
func Setup(ctx context.Context, cfg Config, lookup func(string) (string, bool), version string) (*Tracing, error) {
	lookup = orNone(lookup)
	on, err := enabled(cfg, lookup)
	if err != nil || !on {
		return &Tracing{Provider: Off()}, err
	}
	exp, err := newExporter(ctx, cfg.Traces, lookup)
	if err != nil {
		return nil, err
	}
	res, err := newResource(ctx, cfg, version)
	if err != nil {
		return nil, errors.Join(err, exp.Shutdown(ctx))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	// No sampler option: the SDK reads OTEL_TRACES_SAMPLER itself.
	if s := sampler(cfg.Traces); s != nil {
		opts = append(opts, sdktrace.WithSampler(s))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracing{Provider: tp, sdk: tp}, nil
}

// orNone is lookup, or one that finds nothing when nil.
func orNone(lookup func(string) (string, bool)) func(string) (string, bool) {
	if lookup == nil {
		return func(string) (string, bool) { return "", false }
	}
	return lookup
}

// enabled decides whether tracing is on (see Setup).
func enabled(cfg Config, lookup func(string) (string, bool)) (bool, error) {
	env := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	otlp := false
	if v := env("OTEL_TRACES_EXPORTER"); v != "" {
		for _, name := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "none":
				return false, nil
			case "otlp":
				otlp = true
			default:
				return false, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported (want otlp or none)", name)
			}
		}
	}
	return otlp || cfg.Traces.Endpoint != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
}

// protocol is the block's, else OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf: each Go exporter speaks one
// protocol, so the choice of exporter is made here.
func protocol(t TracesConfig, lookup func(string) (string, bool)) (string, error) {
	if t.Protocol != "" {
		return t.Protocol, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v, _ := lookup(k)
		switch v = strings.TrimSpace(v); v {
		case "":
			continue
		case ProtocolHTTP, ProtocolGRPC:
			return v, nil
		default:
			return "", fmt.Errorf("%s: %q is not supported (want %s or %s)", k, v, ProtocolHTTP, ProtocolGRPC)
		}
	}
	return ProtocolHTTP, nil
}

// newExporter passes options only for the keys the block sets, so the exporter reads
// the rest from the OTEL_EXPORTER_OTLP_* variables.
func newExporter(ctx context.Context, t TracesConfig, lookup func(string) (string, bool)) (sdktrace.SpanExporter, error) {
	proto, err := protocol(t, lookup)
	if err != nil {
		return nil, err
	}
	endpoint, err := collectorURL(t, proto, lookup)
	if err != nil {
		return nil, err
	}
	headers := secret.RevealMap(t.Headers)
	if proto == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		if t.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		if len(headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(headers))
		}
		if t.Timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(t.Timeout))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("start the OTLP/gRPC trace exporter: %w", err)
		}
		return exp, nil
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	if t.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	if len(headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(headers))
	}
	if t.Timeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(t.Timeout))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("start the OTLP/HTTP trace exporter: %w", err)
	}
	return exp, nil
}

// collectorURL is where spans go: the block's endpoint, else the variables' as
// lookup reads them (the exporter would read the process environment, which a caller's
// lookup may not be), else "" for the exporter's default. A base endpoint (the block's,
// OTEL_EXPORTER_OTLP_ENDPOINT) gets /v1/traces for HTTP; the traces one is used as is.
func collectorURL(t TracesConfig, proto string, lookup func(string) (string, bool)) (string, error) {
	if t.Endpoint != "" {
		return baseURL(t.Endpoint, proto), nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		v, _ := lookup(k)
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		// The exporter would fall back to localhost on a URL it cannot read: say so instead.
		if u, err := url.Parse(v); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("%s: must be an http:// or https:// URL", k)
		}
		if k == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
			return v, nil
		}
		return baseURL(v, proto), nil
	}
	return "", nil
}

func baseURL(base, proto string) string {
	if proto == ProtocolGRPC {
		return base
	}
	return tracesURL(base)
}

// tracesURL appends /v1/traces to a collector's base URL, as the exporter does for
// OTEL_EXPORTER_OTLP_ENDPOINT (WithEndpointURL would post to the URL as given).
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil { // the exporter reports it
		return endpoint
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String()
}

// newResource: service.name from the block, else OTEL_SERVICE_NAME (read by the SDK
// with OTEL_RESOURCE_ATTRIBUTES), else "signalgate"; later detectors win.
func newResource(ctx context.Context, cfg Config, version string) (*resource.Resource, error) {
	base := []attribute.KeyValue{semconv.ServiceName(DefaultServiceName)}
	if version != "" {
		base = append(base, semconv.ServiceVersion(version))
	}
	opts := []resource.Option{resource.WithAttributes(base...), resource.WithTelemetrySDK(), resource.WithFromEnv()}
	if cfg.ServiceName != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(cfg.ServiceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("read the trace resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	return res, nil
}

// sampler is the block's sampler; nil leaves the choice to OTEL_TRACES_SAMPLER.
func sampler(t TracesConfig) sdktrace.Sampler {
	ratio := 1.0
	if t.SamplerArg != nil {
		ratio = *t.SamplerArg
	}
	switch t.Sampler {
	case SamplerAlwaysOn:
		return sdktrace.AlwaysSample()
	case SamplerAlwaysOff:
		return sdktrace.NeverSample()
	case SamplerTraceIDRatio:
		return sdktrace.TraceIDRatioBased(ratio)
	case SamplerParentBasedAlwaysOn:
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	case SamplerParentBasedAlwaysOff:
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case SamplerParentBasedTraceIDRatio:
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	}
	return nil
}

// Describe says where Setup would send spans ("off" when tracing is off), for
// `gateway check`; an error is one Setup would fail with.
func Describe(cfg Config, lookup func(string) (string, bool)) (string, error) {
	lookup = orNone(lookup)
	on, err := enabled(cfg, lookup)
	if err != nil || !on {
		return "off", err
	}
	proto, err := protocol(cfg.Traces, lookup)
	if err != nil {
		return "", err
	}
	endpoint, err := collectorURL(cfg.Traces, proto, lookup)
	if err != nil {
		return "", err
	}
	if endpoint == "" {
		endpoint = "the exporter's default endpoint"
	} else if u, err := url.Parse(endpoint); err == nil {
		endpoint = u.Redacted()
	}
	return fmt.Sprintf("OTLP %s to %s", proto, endpoint), nil
}
