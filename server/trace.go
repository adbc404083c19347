package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

// WebhookPrefix starts every connector route: their server span waits for the
// connector's verification (ContinueTrace), the others start a new trace on arrival.
const WebhookPrefix = "/webhooks/"

// WithTracing makes a server span of every request with tp. A nil or no-op provider
// (telemetry.Off) installs nothing.
func WithTracing(tp trace.TracerProvider) Option {
	return func(o *options) { o.traces = tp }
}

// pendingSpan is what the tracing middleware leaves in a connector request's context
// until the connector verified it: the arrival time, and the span once started.
type pendingSpan struct {
	tracer  trace.Tracer
	c       echo.Context
	arrival time.Time
	span    trace.Span
}

type pendingKey struct{}

// start starts the server span under parent (a verified request's extracted context,
// or one without a span for a new root) and moves the request under it.
func (p *pendingSpan) start(parent context.Context) context.Context {
	req := p.c.Request()
	ctx, span := p.tracer.Start(parent, spanName(req.Method, p.c.Path()),
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(p.arrival),
		trace.WithAttributes(requestAttrs(p.c)...))
	p.span = span
	// The request's own context stays the base (deadlines, cancellation, values); only
	// the span comes from parent.
	ctx = trace.ContextWithSpan(req.Context(), span)
	p.c.SetRequest(req.WithContext(ctx))
	return ctx
}

// ContinueTrace is called by a connector once c's request is verified: its server span
// starts now, dated from the request's arrival, continuing the trace of the request's
// traceparent header. It returns the request's context, under that span. With tracing
// off, or once the span has started, it returns the request's context unchanged.
func ContinueTrace(c echo.Context) context.Context {
	ctx := c.Request().Context()
	p, ok := ctx.Value(pendingKey{}).(*pendingSpan)
	if !ok || p.span != nil {
		return ctx
	}
	return p.start(telemetry.Extract(context.Background(), c.Request().Header))
}

// RootTrace starts c's server span as a new trace (a request refused before it was
// verified: its traceparent is not believed) and returns the request's context under it;
// unchanged when tracing is off or the span has started.
func RootTrace(c echo.Context) context.Context {
	ctx := c.Request().Context()
	p, ok := ctx.Value(pendingKey{}).(*pendingSpan)
	if !ok || p.span != nil {
		return ctx
	}
	return p.start(context.Background())
}

// traceMiddleware makes the server span of every request: at arrival for the routes
// that are not a connector's; for a connector's, when it calls ContinueTrace or
// RootTrace, else (refused before verification) a new trace dated from the arrival.
func traceMiddleware(tp trace.TracerProvider, now func() time.Time) echo.MiddlewareFunc {
	tracer := telemetry.Tracer(tp)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := &pendingSpan{tracer: tracer, c: c, arrival: now()}
			if strings.HasPrefix(c.Path(), WebhookPrefix) {
				req := c.Request()
				c.SetRequest(req.WithContext(context.WithValue(req.Context(), pendingKey{}, p)))
			} else {
				p.start(context.Background())
			}
			err := next(c)
			if p.span == nil {
				p.start(context.Background())
			}
			status := c.Response().Status
			if err != nil {
				status = StatusOf(err)
			}
			p.span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if status >= http.StatusInternalServerError {
				p.span.SetStatus(codes.Error, http.StatusText(status))
				if err != nil {
					p.span.RecordError(err)
				}
			}
			p.span.End()
			return err
		}
	}
}

// method is m when it is a known method, else "_OTHER" (semconv), so a client cannot
// mint span names.
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// spanName is "{METHOD} {route}" from echo's route template, never the raw path (a
// client could make every name unique); just the method when no route matched.
func spanName(m, route string) string {
	m = method(m)
	if m == "_OTHER" {
		m = "HTTP"
	}
	if route == "" || !strings.HasPrefix(route, "/") {
		return m
	}
	return m + " " + route
}

func requestAttrs(c echo.Context) []attribute.KeyValue {
	req := c.Request()
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(method(req.Method)),
		semconv.URLPath(req.URL.Path),
		semconv.URLScheme(scheme),
		semconv.ClientAddress(c.RealIP()),
	}
	if route := c.Path(); strings.HasPrefix(route, "/") {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if host, port, err := net.SplitHostPort(req.Host); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(n))
		}
	} else if req.Host != "" {
		attrs = append(attrs, semconv.ServerAddress(req.Host))
	}
	if ua := req.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	return attrs
}

// WithClock sets the clock a request's arrival is read from (its server span's start).
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}
