package agent

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// WakeBudget is `agents[].wake_budget`: at most Max wakes of one thread in any window of
// length Per.
type WakeBudget struct {
	Max int           `yaml:"max" json:"max"`
	Per time.Duration `yaml:"per" json:"per"`
}

// Bounds of the wake settings: a thread's wake log holds up to Max times, and a cap
// beyond a few thousand open runs is no cap.
const (
	MaxWakeBudget           = 1000
	MaxConcurrentWakesLimit = 100_000
)

func (b *WakeBudget) validate(path string) []error {
	var errs []error
	if b.Max < 1 || b.Max > MaxWakeBudget {
		errs = append(errs, fmt.Errorf("%s.max: must be between 1 and %d", path, MaxWakeBudget))
	}
	if b.Per < time.Second {
		errs = append(errs, fmt.Errorf("%s.per: must be at least 1s", path))
	}
	return errs
}

// String is the budget as a reason names it: "6/1h".
func (b WakeBudget) String() string {
	return strconv.Itoa(b.Max) + "/" + shortDuration(b.Per)
}

// shortDuration drops Go's zero units: 1h, 30m, 1h30m, 45s.
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, z := range []struct{ from, to string }{{"m0s", "m"}, {"h0m", "h"}} {
		if len(s) > len(z.from) && s[len(s)-len(z.from):] == z.from {
			s = s[:len(s)-len(z.from)] + z.to
		}
	}
	return s
}

// Spent reports whether wakes (the thread's past wake times) leave no room at now, and
// when the oldest of the window frees a wake.
func (b WakeBudget) Spent(wakes []time.Time, now time.Time) (bool, time.Time) {
	in := InWindow(wakes, now, b.Per)
	if len(in) < b.Max {
		return false, time.Time{}
	}
	return true, in[len(in)-b.Max].Add(b.Per)
}

// InWindow is the wakes (oldest first) within per before now.
func InWindow(wakes []time.Time, now time.Time, per time.Duration) []time.Time {
	from := now.Add(-per)
	for i, w := range wakes {
		if w.After(from) {
			return wakes[i:]
		}
	}
	return nil
}

// WakeRequest is what a wake asks of the run store: the agent's budget and cap, and
// how it queues.
type WakeRequest struct {
	Budget *WakeBudget // nil: no budget
	// Exempt skips the budget (urgent records, messages); the wake still counts.
	Exempt bool
	// NoBudget leaves the budget out altogether: it neither holds nor counts the wake
	// (the agent's own signals). The cap still applies.
	NoBudget bool
	// Limit caps the agent's runs opened by wakes that are open at once (0: none).
	Limit int
	// Rank and Since order the agent's waiting wakes: higher rank first, then the
	// oldest record waiting.
	Rank  int
	Since time.Time
}

// WakeOutcome says what became of a wake.
type WakeOutcome string

// Wake outcomes.
const (
	WakeOpened WakeOutcome = "opened" // a run is open: a new one, or the live one
	WakeSpent  WakeOutcome = "budget" // the thread's wake budget is spent
	WakeQueued WakeOutcome = "queued" // max_concurrent_wakes reached: waits its turn
)

// WakeResult is the answer to a wake.
type WakeResult struct {
	Outcome WakeOutcome
	Run     Run  // WakeOpened
	Created bool // WakeOpened: a new run (false: the thread had one)
	// Until is when a spent budget frees a wake, or when a queued wake looks again at
	// the latest (a slot frees by then: the earliest open wake run's lease lapses).
	Until time.Time
	// Reason names a spent budget: "wake budget 6/1h spent".
	Reason string
}

// WakeStore is the optional RunStore method that accounts wakes: in one transaction it
// checks r's thread's budget and the agent's cap, and opens r (or adopts the live run)
// when both allow, logging the wake against the budget.
type WakeStore interface {
	WakeRun(ctx context.Context, r Run, req WakeRequest) (WakeResult, error)
}

// WakeSettings are an agent's wake budget and cap.
type WakeSettings struct {
	Budget *WakeBudget
	Limit  int
}

// Wake opens a run on an idle thread on the gateway's behalf, within the agent's wake
// budget and max_concurrent_wakes; req says whether the budget applies (Exempt) and how
// the wake queues (Rank, Since), and the agent's settings fill the rest.
func (r *Runs) Wake(ctx context.Context, k inbox.ThreadKey, req WakeRequest) (WakeResult, error) {
	ws, ok := r.store.(WakeStore)
	set := r.WakeSettingsOf(k.Agent)
	if req.NoBudget {
		set.Budget = nil
	}
	if !ok || (set.Budget == nil && set.Limit == 0) {
		run, created, err := r.Open(ctx, k, OriginWake)
		return WakeResult{Outcome: WakeOpened, Run: run, Created: created}, err
	}
	now := r.now().UTC()
	req.Budget, req.Limit = set.Budget, set.Limit
	if req.Since.IsZero() || req.Since.After(now) {
		req.Since = now
	}
	res, err := ws.WakeRun(ctx, Run{ID: r.newID(), Thread: k, Status: RunOpen, Origin: OriginWake, OpenedAt: now,
		LeaseUntil: now.Add(r.lease(k.Agent))}, req)
	if err != nil {
		return WakeResult{}, fmt.Errorf("wake %s: %w", k, err)
	}
	if res.Outcome == WakeSpent {
		res.Reason = "wake budget " + set.Budget.String() + " spent"
	}
	if res.Outcome == WakeOpened && res.Created {
		r.opened(ctx, res.Run)
	}
	return res, nil
}

// WakeSettingsOf is the agent's configured wake budget and cap.
func (r *Runs) WakeSettingsOf(agentID string) WakeSettings { return r.agents.Load().wakes[agentID] }

// WakesFullError answers a wake the agent itself asked for (a signal it sends waking
// its idle thread, a notification its inbox tool reads) when the agent's
// max_concurrent_wakes wake runs are open: nothing was sent or stored, and the caller
// sends again (the same signal id is the same signal) once a slot frees, by RetryAfter
// at the latest. The gateway's own wakes wait in the wake queue instead: their records
// are stored, a signal request is not.
type WakesFullError struct {
	Agent      string
	Limit      int
	RetryAfter time.Duration
}

func (e *WakesFullError) Error() string {
	return fmt.Sprintf("agent %q already has %d wake runs open (agents[].max_concurrent_wakes): the signal was not sent; "+
		"send it again with the same id once a wake run ends (Retry-After), or with ifIdle persist to store it without waking", e.Agent, e.Limit)
}

// ownWake opens a run on the idle thread k for the agent's own request, counted against
// max_concurrent_wakes like every wake and left out of the wake budget (which paces the
// gateway's wakes, not the agent's). It waits behind every thread already waiting for a
// slot. At the cap it is a *WakesFullError.
func (s *Service) ownWake(ctx context.Context, k inbox.ThreadKey) (Run, bool, error) {
	now := s.now().UTC()
	res, err := s.Runs.Wake(ctx, k, WakeRequest{NoBudget: true, Rank: inbox.PriorityLow.Rank(), Since: now})
	if err != nil {
		return Run{}, false, err
	}
	if res.Outcome != WakeOpened {
		return Run{}, false, &WakesFullError{Agent: k.Agent, Limit: s.Runs.WakeSettingsOf(k.Agent).Limit, RetryAfter: max(res.Until.Sub(now), 0)}
	}
	return res.Run, res.Created, nil
}
