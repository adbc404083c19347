package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery"
)

type fakeTargets struct{}

func (fakeTargets) TargetStates(context.Context) ([]delivery.TargetState, error) {
	return []delivery.TargetState{{Agent: "coder", State: delivery.TargetDown}, {Agent: "support", State: delivery.TargetUp, Failures: 2}}, nil
}

func (fakeTargets) Backlog(context.Context, time.Time) (map[string]int, error) {
	return map[string]int{"coder": 50, "gone": 3}, nil
}

func TestTargetGauges(t *testing.T) {
	m := New(nil, slog.New(slog.DiscardHandler))
	m.WatchTargets([]string{"coder", "support"}, fakeTargets{}, slog.New(slog.DiscardHandler))
	m.TargetProbe("coder")
	m.TargetProbe("not-configured") // never a label value from outside the config
	e := echo.New()
	e.GET("/metrics", echo.WrapHandler(m.Handler()))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "signalgate_target_") {
			got = append(got, line)
		}
	}
	require.ElementsMatch(t, []string{
		`signalgate_target_up{agent="coder"} 0`,
		`signalgate_target_up{agent="support"} 1`,
		`signalgate_target_backlog{agent="coder"} 50`,
		`signalgate_target_backlog{agent="support"} 0`,
		`signalgate_target_probes_total{agent="coder"} 1`,
	}, got)
}

// After a reload the target metrics report the agents of the new config: a new agent
// is a label value (its probes are counted), a removed one is no longer reported.
func TestTargetGaugesFollowTheAgents(t *testing.T) {
	m := New(nil, slog.New(slog.DiscardHandler))
	m.WatchTargets([]string{"coder", "support"}, fakeTargets{}, slog.New(slog.DiscardHandler))
	m.SetTargetAgents([]string{"coder", "newbie"})
	m.TargetProbe("newbie")
	m.TargetProbe("support")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var got []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "signalgate_target_") {
			got = append(got, line)
		}
	}
	require.ElementsMatch(t, []string{
		`signalgate_target_up{agent="coder"} 0`,
		`signalgate_target_up{agent="newbie"} 1`,
		`signalgate_target_backlog{agent="coder"} 50`,
		`signalgate_target_backlog{agent="newbie"} 0`,
		`signalgate_target_probes_total{agent="newbie"} 1`,
	}, got)
}
