package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Target states.
const (
	TargetUp   = "up"
	TargetDown = "down"
)

// TargetState is one agent's target as every replica sees it: a target is down after
// FailureThreshold consecutive failed attempts, and up again after one success.
type TargetState struct {
	Agent       string     `json:"agent"`
	State       string     `json:"state"` // up, down
	Since       time.Time  `json:"since"`
	Failures    int        `json:"consecutiveFailures"`
	LastError   string     `json:"lastError,omitempty"` // redacted
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	NextProbeAt *time.Time `json:"nextProbeAt,omitempty"` // while down
}

// Health is the shared up/down state of targets (the store). On PostgreSQL it is one row
// per agent that every replica reads and changes, so replicas share one outage and one
// probe schedule.
type Health interface {
	// TargetStates lists the agents whose target has failed at least once.
	TargetStates(ctx context.Context) ([]TargetState, error)
	// TargetFailed counts a failed attempt. A target still up goes down when its failures
	// reach threshold, with its first probe at probeAt; a target already down moves its
	// next probe to retryAt when the target asked for one. down reports whether this call
	// made the transition.
	TargetFailed(ctx context.Context, agent string, now time.Time, threshold int, probeAt time.Time, retryAt *time.Time, msg string) (st TargetState, down bool, err error)
	// TargetSucceeded clears the failures. When the target was down it is up again and
	// its records waiting for a retry are due at once (up reports the transition).
	TargetSucceeded(ctx context.Context, agent string, now time.Time) (up bool, err error)
	// ClaimProbe takes the down target's probe slot when its next probe is due, moving it
	// to next; only one caller (one replica) gets a slot.
	ClaimProbe(ctx context.Context, agent string, now, next time.Time) (bool, error)
	// ClaimProbeThread leases the thread of the agent's oldest due record.
	ClaimProbeThread(ctx context.Context, agent, owner string, now, until time.Time) (inbox.ThreadKey, bool, error)
}

// HealthObserver is told of probes and transitions (the metrics).
type HealthObserver interface {
	TargetProbe(agent string)
}

// WithHealth tracks target health in h: a down target's records wait without spending
// attempts while one probe at a time finds out when it is back.
func WithHealth(h Health) Option { return func(d *Dispatcher) { d.health.h = h } }

// health is the dispatcher's view of Health, refreshed every pass so a delivery that
// succeeds on a healthy target writes nothing.
type health struct {
	h   Health
	log *slog.Logger

	mu     sync.Mutex
	states map[string]TargetState
}

// refresh reads the shared states.
func (hv *health) refresh(ctx context.Context) error {
	if hv.h == nil {
		return nil
	}
	sts, err := hv.h.TargetStates(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]TargetState, len(sts))
	for _, st := range sts {
		m[st.Agent] = st
	}
	hv.mu.Lock()
	hv.states = m
	hv.mu.Unlock()
	return nil
}

func (hv *health) get(agentID string) (TargetState, bool) {
	hv.mu.Lock()
	defer hv.mu.Unlock()
	st, ok := hv.states[agentID]
	return st, ok
}

func (hv *health) set(st TargetState) {
	hv.mu.Lock()
	defer hv.mu.Unlock()
	if hv.states == nil {
		hv.states = map[string]TargetState{}
	}
	hv.states[st.Agent] = st
}

// down lists the agents seen down, with their next probe time.
func (hv *health) down() []TargetState {
	hv.mu.Lock()
	defer hv.mu.Unlock()
	var out []TargetState
	for _, st := range hv.states {
		if st.State == TargetDown {
			out = append(out, st)
		}
	}
	return out
}

// succeeded records a delivery the target accepted; it reports whether the target came
// back up. Only a target with failures on record costs a write.
func (hv *health) succeeded(ctx context.Context, agentID string, now time.Time) bool {
	if hv.h == nil {
		return false
	}
	st, ok := hv.get(agentID)
	if !ok || (st.Failures == 0 && st.State != TargetDown) {
		return false
	}
	up, err := hv.h.TargetSucceeded(ctx, agentID, now)
	if err != nil {
		hv.log.ErrorContext(ctx, "record target success", "agent", agentID, "error", err.Error())
		return false
	}
	was := st.State
	hv.set(TargetState{Agent: agentID, State: TargetUp, Since: now})
	if up {
		hv.log.InfoContext(ctx, "target up", "agent", agentID, "down_since", st.Since.UTC().Format(time.RFC3339),
			"down_for", now.Sub(st.Since).Round(time.Second).String(), "was", was)
	}
	return up
}

// failed records a retryable failure and returns the target's state after it.
func (hv *health) failed(ctx context.Context, r Route, agentID string, now time.Time, retryAt *time.Time, msg string) TargetState {
	if hv.h == nil {
		return TargetState{Agent: agentID, State: TargetUp}
	}
	probeAt := now.Add(r.ProbeInterval)
	if retryAt != nil {
		// The target's own Retry-After replaces the interval, but never makes a tight loop.
		probeAt = maxTime(*retryAt, now.Add(time.Second))
		retryAt = &probeAt
	}
	st, down, err := hv.h.TargetFailed(ctx, agentID, now, r.FailureThreshold, probeAt, retryAt, msg)
	if err != nil {
		hv.log.ErrorContext(ctx, "record target failure", "agent", agentID, "error", err.Error())
		st, _ = hv.get(agentID)
		return st
	}
	hv.set(st)
	if down {
		hv.log.WarnContext(ctx, "target down", "agent", agentID, "consecutive_failures", st.Failures, "last_error", msg,
			"next_probe_at", probeAt.UTC().Format(time.RFC3339))
	}
	return st
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
