package telemetry

import (
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// TransportOption configures Transport.
type TransportOption func(*transport)

// WithoutPropagation keeps the trace context off the requests: for third parties'
// APIs (GitHub, Slack), which have no use for it and should not learn it.
func WithoutPropagation() TransportOption { return func(t *transport) { t.inject = false } }

// WithURL decides what url.full shows of a request's URL (default: the URL without
// userinfo, query and fragment). A caller whose URL paths may be credentials (a webhook
// URL with a token in it) hides them.
func WithURL(show func(*url.URL) string) TransportOption { return func(t *transport) { t.show = show } }

// Transport wraps base (nil: http.DefaultTransport) so every request is a client span
// named by its method, with the HTTP semantic-convention attributes, and carries that
// span's traceparent. With tracing off (Off(), nil) it returns base unchanged.
func Transport(base http.RoundTripper, tp trace.TracerProvider, opts ...TransportOption) http.RoundTripper {
	if !Enabled(tp) {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{base: base, tracer: Tracer(tp), inject: true, show: shownURL}
	for _, o := range opts {
		o(t)
	}
	return t
}

type transport struct {
	base   http.RoundTripper
	tracer trace.Tracer
	inject bool
	show   func(*url.URL) string
}

// shownURL is u without userinfo, query and fragment: the parts that carry credentials.
func shownURL(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(req.Method), semconv.URLFull(t.show(req.URL))}
	if host, port := hostPort(req.URL); host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	ctx, span := t.tracer.Start(req.Context(), req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	if t.inject {
		// A RoundTripper must not change the caller's request: the header goes on a copy.
		req = req.Clone(ctx)
		Inject(ctx, req.Header)
	} else {
		req = req.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		// The error's text may repeat the URL: only its type is recorded.
		et := semconv.ErrorType(err)
		span.SetAttributes(et)
		span.SetStatus(codes.Error, et.Value.AsString())
		return resp, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		code := strconv.Itoa(resp.StatusCode)
		span.SetAttributes(semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, code)
	}
	return resp, nil
}

// hostPort is the server a request goes to; the port defaults by scheme.
func hostPort(u *url.URL) (string, int) {
	host := u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return host, 0
		}
		return host, n
	}
	switch u.Scheme {
	case "https":
		return host, 443
	case "http":
		return host, 80
	}
	return host, 0
}
