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
	m := New(nil, slog.New(slog.DiscardHandler))
	srv := server.New(server.Config{}, slog.New(slog.DiscardHandler))
	e := srv.Echo()
	e.Use(m.Middleware())
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
	e.GET("/metrics", m.Handler())
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
