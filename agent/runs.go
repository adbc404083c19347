package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// RunStore persists runs. Opening and closing a run appends a run frame to the thread's
// log in the same transaction, so stream subscribers see presence changes in order with
// the signals around them.
type RunStore interface {
	// OpenRun inserts r unless the thread already has a live run; then that run is
	// returned with its lease extended to r.LeaseUntil, and created is false.
	OpenRun(ctx context.Context, r Run) (run Run, created bool, err error)
	// HeartbeatRun extends a live run's lease; ErrRunNotFound or ErrRunClosed otherwise.
	HeartbeatRun(ctx context.Context, k inbox.ThreadKey, id string, now, leaseUntil time.Time) (Run, error)
	// CloseRun moves an open run to status; an aborted run's in-flight signals are kept
	// for recovery with cause (CauseAborted, CauseCrashed). closed is false when it was
	// not open (the call is then a no-op); idle reports that the thread has no live run
	// left.
	CloseRun(ctx context.Context, k inbox.ThreadKey, id, status, cause string, now time.Time) (run Run, closed, idle bool, err error)
	// ExpireRuns closes open runs whose lease lapsed by now. It returns the threads whose
	// logs got a run frame and, among them, those that turned idle.
	ExpireRuns(ctx context.Context, now time.Time) (changed, idle []inbox.ThreadKey, err error)
	// LiveRun returns the thread's live run, or nil when the thread is idle.
	LiveRun(ctx context.Context, k inbox.ThreadKey, now time.Time) (*Run, error)
}

// Runs is thread presence: a thread is active while it has a live run. Callers learn of
// an idle transition from the return values and hand it to the dispatcher, which delivers
// what waited for the thread to turn idle.
type Runs struct {
	store RunStore
	pub   Publisher
	// agents is each agent's run lease and wake settings, swapped by a config reload.
	agents atomic.Pointer[agentSettings]
	now    func() time.Time
	newID  func() string
	mu     sync.RWMutex // guards opens and slots
	opens  []OpenHook
	slots  []func(agentID string)
	log    *slog.Logger
}

// OpenHook is told after a new run is opened (not when a live one is adopted), before
// Open returns: the dispatcher's Recover, which splices the signals an unfinished run left
// in flight into the new one. Its error is logged; the run stays open.
type OpenHook func(ctx context.Context, run Run) error

// OnOpen subscribes h to new runs. The dispatcher subscribes when it is built: it is
// built after Runs, whose users include its own targets (Mastra presence followers).
func (r *Runs) OnOpen(h OpenHook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opens = append(r.opens, h)
}

// OnWakeSlotFreed subscribes h to closed wake runs: told, after commit, that a wake run
// of an agent with max_concurrent_wakes closed (finished, aborted, or its lease lapsed),
// so a slot may be free for a waiter the dispatcher does not serve (the approvals
// service's decisions, which subscribes when it is built). h must not block.
func (r *Runs) OnWakeSlotFreed(h func(agentID string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots = append(r.slots, h)
}

// slotFreed tells the wake slot subscribers when agentID's wakes are capped.
func (r *Runs) slotFreed(agentID string) {
	if r.WakeSettingsOf(agentID).Limit == 0 {
		return
	}
	r.mu.RLock()
	hs := r.slots
	r.mu.RUnlock()
	for _, h := range hs {
		h(agentID)
	}
}

// WithRunsLogger sets the logger.
func WithRunsLogger(l *slog.Logger) RunsOption { return func(r *Runs) { r.log = l } }

// RunsOption configures Runs.
type RunsOption func(*Runs)

// WithRunsClock injects the clock.
func WithRunsClock(now func() time.Time) RunsOption { return func(r *Runs) { r.now = now } }

// WithRunIDs injects the run id generator.
func WithRunIDs(newID func() string) RunsOption { return func(r *Runs) { r.newID = newID } }

// NewRuns builds the presence service; cfgs give each agent's run lease.
func NewRuns(store RunStore, pub Publisher, cfgs []Config, opts ...RunsOption) *Runs {
	r := &Runs{store: store, pub: pub, now: time.Now, newID: inbox.NewID, log: slog.Default()}
	r.SetAgents(cfgs)
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("component", "runs")
	return r
}

// agentSettings is what Runs takes from the agents' config.
type agentSettings struct {
	leases map[string]time.Duration
	wakes  map[string]WakeSettings
}

// SetAgents puts the agents' run leases and wake settings in force (a config reload);
// runs already open keep the lease they were given until their next heartbeat.
func (r *Runs) SetAgents(cfgs []Config) {
	s := &agentSettings{leases: map[string]time.Duration{}, wakes: map[string]WakeSettings{}}
	for _, c := range cfgs {
		s.leases[c.ID] = c.WithDefaults().RunLease
		s.wakes[c.ID] = WakeSettings{Budget: c.WakeBudget, Limit: c.MaxConcurrentWakes}
	}
	r.agents.Store(s)
}

func (r *Runs) lease(agent string) time.Duration {
	if d, ok := r.agents.Load().leases[agent]; ok && d > 0 {
		return d
	}
	return DefaultRunLease
}

// Open opens a run on k, or renews and returns the live one (created false): one thread
// has one live run, and a runtime that reconnects adopts the run a wake opened for it.
func (r *Runs) Open(ctx context.Context, k inbox.ThreadKey, origin string) (Run, bool, error) {
	now := r.now().UTC()
	run, created, err := r.store.OpenRun(ctx, Run{
		ID: r.newID(), Thread: k, Status: RunOpen, Origin: origin, OpenedAt: now, LeaseUntil: now.Add(r.lease(k.Agent)),
	})
	if err != nil {
		return Run{}, false, fmt.Errorf("open run on %s: %w", k, err)
	}
	if created {
		r.opened(ctx, run)
	}
	return run, created, nil
}

// opened tells stream subscribers and the open hooks about a new run.
func (r *Runs) opened(ctx context.Context, run Run) {
	r.pub.Publish(run.Thread)
	r.mu.RLock()
	hooks := r.opens
	r.mu.RUnlock()
	for _, h := range hooks {
		if err := h(ctx, run); err != nil {
			r.log.Error("open hook failed", "thread", run.Thread.String(), "run_id", run.ID, "error", err.Error())
		}
	}
}

// Heartbeat renews a live run's lease.
func (r *Runs) Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (Run, error) {
	now := r.now().UTC()
	run, err := r.store.HeartbeatRun(ctx, k, id, now, now.Add(r.lease(k.Agent)))
	if err != nil {
		return Run{}, fmt.Errorf("heartbeat run %s: %w", id, err)
	}
	return run, nil
}

// Finish closes a run as finished or aborted. Closing a run that is no longer open is a
// no-op returning it as it is. idle reports an idle transition.
func (r *Runs) Finish(ctx context.Context, k inbox.ThreadKey, id, status string) (run Run, idle bool, err error) {
	return r.Close(ctx, k, id, status, CauseAborted)
}

// Close is Finish naming why an aborted run ended (CauseAborted, CauseCrashed): its
// recovered signals carry the cause.
func (r *Runs) Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (run Run, idle bool, err error) {
	if status == "" {
		status = RunFinished
	}
	if status != RunFinished && status != RunAborted {
		return Run{}, false, fmt.Errorf("finish run %s: unknown status %q (want finished or aborted)", id, status)
	}
	if status == RunFinished {
		cause = ""
	}
	run, closed, idle, err := r.store.CloseRun(ctx, k, id, status, cause, r.now().UTC())
	if err != nil {
		return Run{}, false, fmt.Errorf("finish run %s: %w", id, err)
	}
	if closed {
		r.pub.Publish(k)
		if run.Origin == OriginWake {
			r.slotFreed(k.Agent)
		}
	}
	return run, idle, nil
}

// Expire closes runs whose lease lapsed and returns the threads that turned idle.
func (r *Runs) Expire(ctx context.Context) ([]inbox.ThreadKey, error) {
	changed, idle, err := r.store.ExpireRuns(ctx, r.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("expire runs: %w", err)
	}
	agents := map[string]bool{}
	for _, k := range changed {
		r.pub.Publish(k)
		agents[k.Agent] = true
	}
	// Lapsed runs of any origin: the hook looks for what waits, if anything.
	for id := range agents {
		r.slotFreed(id)
	}
	return idle, nil
}

// liveLister is the optional RunStore method LiveThreads uses.
type liveLister interface {
	LiveRunThreads(ctx context.Context, agentID string, now time.Time) ([]inbox.ThreadKey, error)
}

// LiveThreads lists agentID's threads with a live run (none when the store cannot list).
func (r *Runs) LiveThreads(ctx context.Context, agentID string) ([]inbox.ThreadKey, error) {
	l, ok := r.store.(liveLister)
	if !ok {
		return nil, nil
	}
	ks, err := l.LiveRunThreads(ctx, agentID, r.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("list live threads of %s: %w", agentID, err)
	}
	return ks, nil
}

// Live returns the thread's live run, or nil when it is idle.
func (r *Runs) Live(ctx context.Context, k inbox.ThreadKey) (*Run, error) {
	run, err := r.store.LiveRun(ctx, k, r.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("read presence of %s: %w", k, err)
	}
	return run, nil
}
