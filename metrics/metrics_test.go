package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

type failingInbox struct{}

func (failingInbox) Ingest(context.Context, *inbox.Event, []inbox.Notification) (inbox.IngestResult, error) {
	return inbox.IngestResult{}, errors.New("disk full")
}

func TestIngestOutcomesCountedOnceWithBoundedLabels(t *testing.T) {
	m := New(nil, slog.New(slog.DiscardHandler), WithLabels(Labels{Sources: []string{"generic"}, Connectors: []string{"billing", "slow"}}))
	srv := server.New(server.Config{}, slog.New(slog.DiscardHandler))
	e := srv.Echo()
	e.Use(server.Observe(m))
	ing := m.WrapIngester(failingInbox{})
	e.POST("/webhooks/generic/:connector", func(c echo.Context) error {
		switch c.Param("connector") {
		case "billing":
			_, err := ing.Ingest(c.Request().Context(), &inbox.Event{Source: "generic", Connector: "billing"}, nil)
			return err
		case "slow":
			return fmt.Errorf("store: %w", context.DeadlineExceeded)
		}
		return server.NotFound("no generic connector named %q", c.Param("connector"))
	})
	for _, name := range []string{"billing", "slow", "x1", "x2", "x3"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks/generic/"+name, nil))
	}
	rec := httptest.NewRecorder()
	e.GET("/metrics", echo.WrapHandler(m.Handler()))
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var received []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "signalgate_events_received_total{") {
			received = append(received, line)
		}
	}
	// A failure to store is counted once (by the inbox decorator), not again as a 5xx,
	// and unknown connector names share one series.
	require.ElementsMatch(t, []string{
		`signalgate_events_received_total{connector="billing",outcome="error",source="generic"} 1`,
		`signalgate_events_received_total{connector="unknown",outcome="rejected",source="generic"} 3`,
	}, received)
	// Metrics record the status the client got: a timeout is 503, as answered.
	require.Contains(t, rec.Body.String(), `signalgate_http_request_duration_seconds_count{code="503",method="POST",route="/webhooks/generic/:connector"} 1`)
}

// An attacker picks the method, the path and the connector name of every request: none
// of them may mint a series.
func TestRequestValuesNeverMintSeries(t *testing.T) {
	m := New(nil, slog.New(slog.DiscardHandler), WithLabels(Labels{Sources: []string{"generic", "agent-api"}, Connectors: []string{"billing", "coder"}}))
	srv := server.New(server.Config{BodyLimit: 64}, slog.New(slog.DiscardHandler), server.WithObserver(server.Observe(m)))
	e := srv.Echo()
	e.POST("/webhooks/generic/:connector", func(c echo.Context) error {
		if c.Param("connector") != "billing" {
			return server.NotFound("no generic connector named %q", c.Param("connector"))
		}
		return c.NoContent(http.StatusAccepted)
	})
	e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.GET("/metrics", echo.WrapHandler(m.Handler()))
	series := func() int {
		mfs, err := m.Registry().Gather()
		require.NoError(t, err)
		n := 0
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "signalgate_") {
				n += len(mf.GetMetric())
			}
		}
		return n
	}
	send := func(method, path string, body string) {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	}
	for i := range 3 {
		send(fmt.Sprintf("X%dINVENTED", i), "/healthz", "")
		send(fmt.Sprintf("X%dINVENTED", i), fmt.Sprintf("/webhooks/generic/nope-%d", i), "")
		send(http.MethodPost, fmt.Sprintf("/webhooks/generic/nope-%d", i), "")
		send(http.MethodPost, fmt.Sprintf("/webhooks/generic/big-%d", i), strings.Repeat("x", 100)) // 413 before any handler
		send(http.MethodGet, fmt.Sprintf("/scan/%d/.env", i), "")
	}
	base := series()
	for i := range 1000 {
		send(fmt.Sprintf("M%dINVENTED", i), "/healthz", "")
		send(fmt.Sprintf("M%dINVENTED", i), fmt.Sprintf("/webhooks/generic/nope-%d", i), "")
		send(http.MethodPost, fmt.Sprintf("/webhooks/generic/nope-%d", i), "")
		send(http.MethodPost, fmt.Sprintf("/webhooks/generic/big-%d", i), strings.Repeat("x", 100))
		send(http.MethodGet, fmt.Sprintf("/scan/%d/.env", i), "")
	}
	require.Equal(t, base, series(), "5000 requests with invented methods, paths and connectors add no series")

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Contains(t, rec.Body.String(), `method="other"`)
	require.Contains(t, rec.Body.String(), `signalgate_http_request_duration_seconds_count{code="413",method="POST",route="/webhooks/generic/:connector"} 1003`)
	require.NotContains(t, rec.Body.String(), "INVENTED")
	require.NotContains(t, rec.Body.String(), "nope-")
	require.NotContains(t, rec.Body.String(), "big-")

	// The agent API takes its source from the request body.
	ing := m.WrapIngester(okInbox{})
	for i := range 100 {
		_, err := ing.Ingest(context.Background(), &inbox.Event{Source: fmt.Sprintf("made-up-%d", i), Connector: "coder", Status: inbox.EventRouted},
			nil)
		require.NoError(t, err)
	}
	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "signalgate_events_received_total" {
			for _, mm := range mf.GetMetric() {
				for _, lp := range mm.GetLabel() {
					require.NotContains(t, lp.GetValue(), "made-up")
				}
			}
		}
	}
}

type okInbox struct{}

func (okInbox) Ingest(context.Context, *inbox.Event, []inbox.Notification) (inbox.IngestResult, error) {
	return inbox.IngestResult{}, nil
}
