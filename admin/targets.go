package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/delivery"
)

// TargetStatus is one agent's target as GET /targets shows it.
type TargetStatus struct {
	Agent string `json:"agent"`
	Kind  string `json:"kind,omitempty"`
	State string `json:"state"` // up, down
	// Since is when the target entered its state (absent for a target that never failed).
	Since       *time.Time `json:"since,omitempty"`
	Failures    int        `json:"consecutiveFailures"`
	LastError   string     `json:"lastError,omitempty"` // redacted when stored
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	Backlog     int        `json:"backlog"`               // pending records due or waiting for a retry
	NextProbeAt *time.Time `json:"nextProbeAt,omitempty"` // while down
}

type targetList struct {
	Targets []TargetStatus `json:"targets"`
}

// listTargets is GET /targets.
func (a *API) listTargets(c echo.Context) error {
	p := readParams(c.QueryParams())
	if p.err != nil {
		return p.err
	}
	out, err := a.Targets(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, targetList{Targets: out})
}

// Targets is every configured agent's target health (shared by all replicas) and
// backlog, by agent id.
func (a *API) Targets(ctx context.Context) ([]TargetStatus, error) {
	states, err := a.d.Store.TargetStates(ctx)
	if err != nil {
		return nil, err
	}
	backlog, err := a.d.Store.Backlog(ctx, a.d.Now().UTC())
	if err != nil {
		return nil, err
	}
	byAgent := make(map[string]delivery.TargetState, len(states))
	for _, st := range states {
		byAgent[st.Agent] = st
	}
	out := make([]TargetStatus, 0, len(a.d.Agents))
	for _, id := range a.d.Agents {
		ts := TargetStatus{Agent: id, Kind: a.d.TargetKinds[id], State: delivery.TargetUp, Backlog: backlog[id]}
		if st, ok := byAgent[id]; ok {
			ts.State, ts.Failures, ts.LastError = st.State, st.Failures, st.LastError
			if !st.Since.IsZero() {
				since := st.Since.UTC()
				ts.Since = &since
			}
			ts.LastErrorAt, ts.NextProbeAt = utcPtr(st.LastErrorAt), utcPtr(st.NextProbeAt)
		}
		out = append(out, ts)
	}
	return out, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
