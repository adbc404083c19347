package metrics

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/telemetry"
)

// TestHistogramsCarryTheTraceAsExemplar: a request observed with a sampled server span
// in its context leaves {trace_id} exemplars on the latency buckets, visible to an
// OpenMetrics scrape; an unsampled or absent span leaves none.
func TestHistogramsCarryTheTraceAsExemplar(t *testing.T) {
	for _, c := range []struct {
		name    string
		sampler sdktrace.Sampler
		want    bool
	}{{"sampled", sdktrace.AlwaysSample(), true}, {"unsampled", sdktrace.NeverSample(), false}, {"off", nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			var tp trace.TracerProvider = telemetry.Off()
			if c.sampler != nil {
				tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(c.sampler), sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			}
			m := New(nil, slog.New(slog.DiscardHandler), WithLabels(Labels{Sources: []string{"github"}, Connectors: []string{"acme"}}))
			e := server.New(server.Config{}, slog.New(slog.DiscardHandler)).Echo()
			e.Use(server.Observe(m))
			var traceID string
			// What the server span middleware does: the span goes in the request's context.
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					ctx, span := telemetry.Tracer(tp).Start(c.Request().Context(), c.Request().Method+" "+c.Path())
					defer span.End()
					if c.Request().Method == http.MethodPost {
						traceID = span.SpanContext().TraceID().String()
					}
					c.SetRequest(c.Request().WithContext(ctx))
					return next(c)
				}
			})
			e.POST("/webhooks/github/:connector", func(c echo.Context) error { return c.NoContent(http.StatusAccepted) })
			e.GET("/metrics", echo.WrapHandler(m.Handler()))
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", nil))

			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			require.Contains(t, rec.Header().Get("Content-Type"), "application/openmetrics-text")
			exemplar := `# {trace_id="` + traceID + `"}`
			for _, family := range []string{
				`signalgate_ingest_duration_seconds_bucket{source="github"`,
				`signalgate_http_request_duration_seconds_bucket{code="202",method="POST",route="/webhooks/github/:connector"`,
			} {
				var found bool
				for _, line := range strings.Split(rec.Body.String(), "\n") {
					if strings.HasPrefix(line, family) && strings.Contains(line, " # {") {
						require.True(t, c.want, "no exemplar expected: %s", line)
						require.Contains(t, line, exemplar)
						found = true
					}
				}
				require.Equal(t, c.want, found, family)
			}

			// The Prometheus text format, as before.
			rec = httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			require.Contains(t, rec.Header().Get("Content-Type"), "text/plain")
			require.NotContains(t, rec.Body.String(), "trace_id")
		})
	}
}
