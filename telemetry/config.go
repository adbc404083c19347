package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signalgate/signalgate/secret"
)

// Config is the telemetry: block. Every key is optional: what it leaves unset comes from
// the standard OTEL_* variables, and with neither, tracing is off.
type Config struct {
	// ServiceName is the resource's service.name (default: OTEL_SERVICE_NAME, then
	// "signalgate").
	ServiceName string       `yaml:"service_name"`
	Traces      TracesConfig `yaml:"traces"`
	// TraceURL links a record's trace id to the operator's tracing backend: a URL with
	// {trace_id} in it (e.g. https://jaeger.example/trace/{trace_id}).
	TraceURL string `yaml:"trace_url"`
}

// TracesConfig is telemetry.traces: where and how spans are exported and sampled.
type TracesConfig struct {
	// Endpoint is the collector's URL (http:// or https://); for http/protobuf,
	// /v1/traces is appended to its path, as for OTEL_EXPORTER_OTLP_ENDPOINT. Setting it
	// turns tracing on.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf (default) or grpc.
	Protocol string `yaml:"protocol"`
	// Headers go on every export request (e.g. a backend's API key); they replace
	// OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]secret.Secret `yaml:"headers"`
	// Insecure exports without TLS (gRPC to a collector without an http:// endpoint).
	Insecure bool `yaml:"insecure"`
	// Timeout bounds one export (default 10s, or OTEL_EXPORTER_OTLP_TIMEOUT).
	Timeout time.Duration `yaml:"timeout"`
	// Sampler and SamplerArg override OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
	Sampler    string   `yaml:"sampler"`
	SamplerArg *float64 `yaml:"sampler_arg"`
}

// Protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Sampler names, as the OpenTelemetry specification lists them for OTEL_TRACES_SAMPLER.
const (
	SamplerAlwaysOn                = "always_on"
	SamplerAlwaysOff               = "always_off"
	SamplerTraceIDRatio            = "traceidratio"
	SamplerParentBasedAlwaysOn     = "parentbased_always_on"
	SamplerParentBasedAlwaysOff    = "parentbased_always_off"
	SamplerParentBasedTraceIDRatio = "parentbased_traceidratio"
)

// Validate returns one error per problem, each starting with its key (relative to the
// block); header values never appear in them.
func (c Config) Validate() error {
	var errs []error
	if c.TraceURL != "" {
		if !strings.Contains(c.TraceURL, TraceURLPlaceholder) {
			errs = append(errs, fmt.Errorf("trace_url: must contain %s", TraceURLPlaceholder))
		}
		// The console renders it as a link: no javascript: or other schemes.
		if u, err := url.Parse(strings.ReplaceAll(c.TraceURL, TraceURLPlaceholder, "x")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("trace_url: must be an absolute http or https URL"))
		}
	}
	t := c.Traces
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			errs = append(errs, errors.New("traces.endpoint: must be an http:// or https:// URL (e.g. http://otel-collector:4318)"))
		case u.User != nil:
			errs = append(errs, errors.New("traces.endpoint: must not carry credentials (use traces.headers)"))
		case u.Scheme == "https" && t.Insecure:
			errs = append(errs, errors.New("traces.insecure: conflicts with the https endpoint"))
		}
	}
	switch t.Protocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		errs = append(errs, fmt.Errorf("traces.protocol: must be %s or %s, got %q", ProtocolHTTP, ProtocolGRPC, t.Protocol))
	}
	for name, v := range t.Headers {
		if !validHeaderName(name) {
			errs = append(errs, fmt.Errorf("traces.headers: %q is not a valid header name", name))
		}
		if strings.ContainsAny(v.Reveal(), "\r\n\x00") {
			errs = append(errs, fmt.Errorf("traces.headers.%s: value must not contain line breaks", name))
		}
	}
	if t.Timeout < 0 {
		errs = append(errs, errors.New("traces.timeout: must not be negative"))
	}
	switch t.Sampler {
	case "", SamplerAlwaysOn, SamplerAlwaysOff, SamplerParentBasedAlwaysOn, SamplerParentBasedAlwaysOff:
		if t.SamplerArg != nil {
			errs = append(errs, fmt.Errorf("traces.sampler_arg: only for sampler %s or %s", SamplerTraceIDRatio, SamplerParentBasedTraceIDRatio))
		}
	case SamplerTraceIDRatio, SamplerParentBasedTraceIDRatio:
		if a := t.SamplerArg; a != nil && !(*a >= 0 && *a <= 1) {
			errs = append(errs, fmt.Errorf("traces.sampler_arg: must be a ratio between 0 and 1, got %v", *a))
		}
	default:
		errs = append(errs, fmt.Errorf("traces.sampler: unknown %q (want %s)", t.Sampler, strings.Join([]string{
			SamplerAlwaysOn, SamplerAlwaysOff, SamplerTraceIDRatio,
			SamplerParentBasedAlwaysOn, SamplerParentBasedAlwaysOff, SamplerParentBasedTraceIDRatio}, ", ")))
	}
	return errors.Join(errs...)
}

// validHeaderName: an HTTP token, which gRPC metadata also takes once lowercased.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
