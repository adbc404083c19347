package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/telemetry"
)

const (
	incomingTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	incomingParent = "00f067aa0ba902b7"
	incomingTP     = "00-" + incomingTrace + "-" + incomingParent + "-01"
	hookRoute      = "/webhooks/test/:connector"
)

// tracedServer is a server with tracing on, a fixed arrival clock, and routes: a
// connector route that continues the trace once its "verification" (a header) passes,
// an API route, and a route failing with 500. seen gets the span context each handler
// ran under.
func tracedServer(t *testing.T, opts ...Option) (*echo.Echo, *tracetest.SpanRecorder, *[]trace.SpanContext) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append([]Option{WithTracing(tp)}, opts...)
	s := New(Config{}, slog.New(slog.DiscardHandler), opts...)
	var seen []trace.SpanContext
	e := s.Echo()
	e.POST(hookRoute, func(c echo.Context) error {
		if c.Request().Header.Get("X-Verified") != "yes" {
			return Unauthorized()
		}
		ctx := ContinueTrace(c)
		require.Equal(t, ctx, c.Request().Context(), "the request now runs under the server span")
		seen = append(seen, trace.SpanContextFromContext(ctx))
		return c.NoContent(http.StatusOK)
	})
	e.GET("/api/things", func(c echo.Context) error {
		seen = append(seen, trace.SpanContextFromContext(c.Request().Context()))
		return c.NoContent(http.StatusOK)
	})
	e.GET("/api/broken", func(echo.Context) error { return errors.New("boom") })
	return e, rec, &seen
}

func serve(e *echo.Echo, method, target string, h http.Header) int {
	req := httptest.NewRequest(method, target, strings.NewReader("{}"))
	for k, v := range h {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	return w.Code
}

func TestTraceVerifiedWebhookContinuesItsTrace(t *testing.T) {
	arrival := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	e, rec, seen := tracedServer(t, WithClock(func() time.Time { return arrival }))
	code := serve(e, http.MethodPost, "/webhooks/test/main", http.Header{
		"Traceparent": {incomingTP}, "X-Verified": {"yes"}, "User-Agent": {"GitHub-Hookshot/1"},
	})
	require.Equal(t, http.StatusOK, code)
	spans := rec.Ended()
	require.Len(t, spans, 1)
	sp := spans[0]
	require.Equal(t, "POST "+hookRoute, sp.Name())
	require.Equal(t, trace.SpanKindServer, sp.SpanKind())
	require.Equal(t, incomingTrace, sp.SpanContext().TraceID().String(), "continues the verified sender's trace")
	require.Equal(t, incomingParent, sp.Parent().SpanID().String())
	require.True(t, sp.Parent().IsRemote())
	require.Equal(t, arrival, sp.StartTime(), "dated from the request's arrival, not from its verification")
	require.Equal(t, []trace.SpanContext{sp.SpanContext()}, *seen, "the handler ran under the server span")
	attrs := map[string]any{}
	for _, kv := range sp.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	require.Equal(t, "POST", attrs["http.request.method"])
	require.Equal(t, hookRoute, attrs["http.route"])
	require.Equal(t, "/webhooks/test/main", attrs["url.path"])
	require.Equal(t, "http", attrs["url.scheme"])
	require.Equal(t, "example.com", attrs["server.address"])
	require.Equal(t, "GitHub-Hookshot/1", attrs["user_agent.original"])
	require.Equal(t, "192.0.2.1", attrs["client.address"])
	require.EqualValues(t, 200, attrs["http.response.status_code"])
}

func TestTraceUnverifiedWebhookStartsANewTrace(t *testing.T) {
	e, rec, seen := tracedServer(t)
	code := serve(e, http.MethodPost, "/webhooks/test/main", http.Header{"Traceparent": {incomingTP}})
	require.Equal(t, http.StatusUnauthorized, code)
	spans := rec.Ended()
	require.Len(t, spans, 1)
	sp := spans[0]
	require.Equal(t, "POST "+hookRoute, sp.Name())
	require.NotEqual(t, incomingTrace, sp.SpanContext().TraceID().String(), "an unverified traceparent is ignored")
	require.False(t, sp.Parent().IsValid(), "a root span")
	require.Empty(t, *seen)
}

func TestTraceAPIRoutesNeverContinueAHeader(t *testing.T) {
	e, rec, seen := tracedServer(t)
	require.Equal(t, http.StatusOK, serve(e, http.MethodGet, "/api/things", http.Header{"Traceparent": {incomingTP}}))
	spans := rec.Ended()
	require.Len(t, spans, 1)
	require.Equal(t, "GET /api/things", spans[0].Name())
	require.False(t, spans[0].Parent().IsValid())
	require.NotEqual(t, incomingTrace, spans[0].SpanContext().TraceID().String())
	require.Equal(t, []trace.SpanContext{spans[0].SpanContext()}, *seen, "the handler runs under its span from the start")
}

func TestTraceServerErrorIsAnErrorSpan(t *testing.T) {
	e, rec, _ := tracedServer(t)
	require.Equal(t, http.StatusInternalServerError, serve(e, http.MethodGet, "/api/broken", nil))
	spans := rec.Ended()
	require.Len(t, spans, 1)
	require.Equal(t, codes.Error, spans[0].Status().Code)
}

// A client choosing paths and methods must not be able to mint span names: a tracing
// backend indexes them, and every distinct one is a new series.
func TestTraceHostilePathsGiveBoundedNames(t *testing.T) {
	e, rec, _ := tracedServer(t)
	methods := []string{http.MethodGet, http.MethodPost, "FOO", "BREW"}
	for i := range 10000 {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		path := "/" + hex.EncodeToString(b)
		switch i % 3 {
		case 1:
			path = "/webhooks/test/" + hex.EncodeToString(b) + "/x"
		case 2:
			path = "/api/" + hex.EncodeToString(b)
		}
		serve(e, methods[i%len(methods)], path, nil)
	}
	names := map[string]bool{}
	for _, sp := range rec.Ended() {
		names[sp.Name()] = true
	}
	require.Len(t, rec.Ended(), 10000)
	require.LessOrEqual(t, len(names), 8, "names: %v", names)
	for n := range names {
		require.NotContains(t, n, "/api/", "no raw path in a name: %q", n)
	}
}

func TestTraceOffInstallsNothing(t *testing.T) {
	for name, opts := range map[string][]Option{
		"no option": nil,
		"off":       {WithTracing(telemetry.Off())},
	} {
		t.Run(name, func(t *testing.T) {
			s := New(Config{}, slog.New(slog.DiscardHandler), opts...)
			require.Nil(t, s.trace, "no middleware at all")
			var ctx context.Context
			s.Echo().POST(hookRoute, func(c echo.Context) error {
				ctx = ContinueTrace(c)
				require.Equal(t, c.Request().Context(), ctx)
				return c.NoContent(http.StatusOK)
			})
			require.Equal(t, http.StatusOK, serve(s.Echo(), http.MethodPost, "/webhooks/test/main",
				http.Header{"Traceparent": {incomingTP}}))
			require.Nil(t, ctx.Value(pendingKey{}))
			require.False(t, trace.SpanContextFromContext(ctx).IsValid(), "no span, not even the sender's")
		})
	}
}
