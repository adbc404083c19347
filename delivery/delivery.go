// Package delivery is the dispatcher: it finds inbox records that are due, turns each
// thread's due records into signals (full notifications, paced summaries) in priority
// order, hands them to the thread's agent target, and retries failures with backoff until
// they succeed or become dead letters. It depends only on the small interfaces below.
package delivery

import (
	"context"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// Target reaches one agent. A nil error means the signal was accepted; the dispatcher
// then logs it to the thread, with the Result's status, and never sends the same signal
// again. A failure is an *agent.DeliveryError saying whether trying again later may help,
// the HTTP status and the receiver's Retry-After; any other error fails the record for good.
type Target interface {
	Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error)
}

// TargetFunc adapts a function to Target.
type TargetFunc func(ctx context.Context, d agent.Handoff) (agent.Result, error)

// Deliver calls f.
func (f TargetFunc) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	return f(ctx, d)
}

// Route is how the dispatcher reaches one agent.
type Route struct {
	Kind   string // target kind, for the attempt log and the metrics' target label
	Target Target
	// MaxAttempts optionally caps a record's attempts (0: no cap); MaxAge fails a record
	// once that long has passed since its first attempt (0: agent.DefaultMaxAge).
	MaxAttempts int
	MaxAge      time.Duration
	// FailureThreshold consecutive failures mark the target down; while down one probe
	// goes out per ProbeInterval. Zero values take the agent defaults.
	FailureThreshold int
	ProbeInterval    time.Duration
	// Concurrency bounds the threads delivered to this route at once (0: no bound beyond
	// the dispatcher's workers). A waiting thread does not hold a worker, so a slow or
	// failing target cannot starve the others.
	Concurrency int
	// StreamOptions go with every wake to this agent that nothing else gives stream
	// options to (its kind's default: StreamOptionsDefault).
	StreamOptions map[string]any
}

// StreamOptionsDefault is implemented by a target kind's settings that give every wake
// default stream options (a mastra target's stream_options).
type StreamOptionsDefault interface {
	WakeStreamOptions() map[string]any
}

// RouteOf is the route of agent c through t: its retry, give-up and health settings,
// and its kind's default stream options. The concurrency bound is the caller's.
func RouteOf(c agent.Config, t Target) Route {
	c = c.WithDefaults()
	r := Route{Kind: c.Target.Kind, Target: t, MaxAttempts: c.Target.MaxAttempts, MaxAge: c.Target.MaxAge,
		FailureThreshold: c.Target.FailureThreshold, ProbeInterval: c.Target.ProbeInterval}
	if s, ok := c.Target.Settings.(StreamOptionsDefault); ok {
		r.StreamOptions = s.WakeStreamOptions()
	}
	return r
}

// withDefaults fills the zero settings of a route built by hand.
func (r Route) withDefaults() Route {
	if r.MaxAge <= 0 {
		r.MaxAge = agent.DefaultMaxAge
	}
	if r.FailureThreshold <= 0 {
		r.FailureThreshold = agent.DefaultFailureThreshold
	}
	if r.ProbeInterval <= 0 {
		r.ProbeInterval = agent.DefaultProbeInterval
	}
	return r
}

// StreamRoutes routes every stream agent of cfgs to the stream target. Agents of other
// kinds get their routes from the targets that reach them.
func StreamRoutes(cfgs []agent.Config, stream Target) map[string]Route {
	out := map[string]Route{}
	for _, c := range cfgs {
		if c.WithDefaults().Target.Kind == agent.TargetStream {
			out[c.ID] = RouteOf(c, stream)
		}
	}
	return out
}

// Queue is the durable work queue the dispatcher needs.
type Queue interface {
	// ClaimThreads leases up to limit threads that have due records and no live lease,
	// earliest due first, until `until`. A crashed owner's leases lapse and are reclaimed.
	ClaimThreads(ctx context.Context, owner string, now, until time.Time, limit int) ([]inbox.ThreadKey, error)
	// RenewThread extends owner's lease of k until `until`; false when owner no longer
	// holds it (another replica claimed it since, or a pass released it).
	RenewThread(ctx context.Context, owner string, k inbox.ThreadKey, until time.Time) (bool, error)
	// ThreadsWork reads what a pass over claimed threads needs, one Work per key in
	// order: presence, summary pacing and up to limit due records each, most urgent
	// first, then oldest. A pass reads all its threads at once.
	ThreadsWork(ctx context.Context, keys []inbox.ThreadKey, now time.Time, limit int) ([]Work, error)
	// CompleteThread applies a pass's outcome in one transaction and releases (or holds)
	// owner's lease. An empty owner holds no lease.
	CompleteThread(ctx context.Context, owner string, o Outcome) error
	// NextDue is the earliest time something may need the dispatcher: a record falling
	// due, a run lease lapsing, a foreign thread lease lapsing, a snooze ending. Nil when
	// nothing waits.
	NextDue(ctx context.Context, now time.Time) (*time.Time, error)
}

// Publisher is told after commit that a thread's log has new frames (the stream broker).
type Publisher interface {
	Publish(k inbox.ThreadKey)
}

// Runs is the presence the dispatcher needs: waking an idle thread opens a run, and lapsed
// runs are closed on the dispatcher's clock (which turns their threads idle).
type Runs interface {
	// Wake opens a run on an idle thread within the agent's wake budget and
	// max_concurrent_wakes (see agent.WakeRequest).
	Wake(ctx context.Context, k inbox.ThreadKey, req agent.WakeRequest) (agent.WakeResult, error)
	Expire(ctx context.Context) ([]inbox.ThreadKey, error)
}

// Work is a claimed thread as the planner sees it.
type Work struct {
	Thread        inbox.ThreadKey
	CreatedAt     time.Time // the thread's creation: salts summary signal ids
	RunID         string    // the live run; "" when the thread is idle
	LastSummaryAt *time.Time
	Summaries     int64          // summaries delivered so far
	Records       []inbox.Record // due records, most urgent first, then oldest
}

// Active reports whether the thread has a live run.
func (w Work) Active() bool { return w.RunID != "" }

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetry     = "retry"
	OutcomeFailed    = "failed"
)

// Attempt is one row of the attempt log.
type Attempt struct {
	ID         int64           `json:"id"`
	Thread     inbox.ThreadKey `json:"thread"`
	Target     string          `json:"target"`
	SignalID   string          `json:"signalId"`
	RecordIDs  []string        `json:"recordIds"`
	Attempt    int             `json:"attempt"`
	Outcome    string          `json:"outcome"`
	StatusCode int             `json:"statusCode,omitempty"`
	Error      string          `json:"error,omitempty"`
	Duration   time.Duration   `json:"durationNs"`
	At         time.Time       `json:"at"`
}

// AttemptFilter selects attempt log rows; empty fields match all.
type AttemptFilter struct {
	Thread   *inbox.ThreadKey
	SignalID string
	RecordID string
	BeforeID int64 // page: rows with a smaller id
	Limit    int   // default 100
}

// Sent is a record carried by a delivered signal. UpdatedAt and Coalesced are the
// version the signal was built from: a record merged meanwhile keeps its new content
// pending.
type Sent struct {
	RecordID  string
	UpdatedAt time.Time
	Coalesced int
	SignalID  string
	Attempts  int // the successful attempt counts too
	// NetKey, State and RestState are the record's net-state lane: a record delivered
	// in full tells the model its state (see inbox.DecideNet).
	NetKey, State, RestState string
}

// Failure is a record whose signal was not accepted.
type Failure struct {
	RecordID       string
	Attempts       int
	FirstAttemptAt time.Time  // kept when the record has one already: max_age counts from it
	NextAttemptAt  *time.Time // nil when Failed
	Error          string     // redacted
	Failed         bool       // dead letter: no more attempts
}

// Reschedule moves a due record that was not sent to its next due time (nil: nothing
// scheduled). FullWhenIdle also marks it to go out in full when the thread turns idle.
type Reschedule struct {
	RecordID     string
	UpdatedAt    time.Time
	Coalesced    int
	DueAt        *time.Time
	FullWhenIdle bool
}

// Hold turns a full notification that found the thread's wake budget spent into a
// summary-only record: due for the thread's next summary at once, Reason appended.
type Hold struct {
	RecordID  string
	UpdatedAt time.Time
	Coalesced int
	Reason    string
}

// Held is a due record a hold that began after it was decided (a silence) took at the
// last moment: it is not sent, and nothing is scheduled until the hold ends.
type Held struct {
	RecordID  string
	UpdatedAt time.Time
	Coalesced int
	Hold      inbox.Hold
	Reason    string // the record's reason, led by the hold's
}

// Outcome is everything one pass over a thread changes, committed in one transaction.
type Outcome struct {
	Thread inbox.ThreadKey
	Now    time.Time
	// Frames are the accepted signals, appended to the thread's log (each id at most
	// once). For the stream target this append is the delivery.
	Frames      []agent.Frame
	Delivered   []Sent     // delivered in full
	Summarized  []Sent     // listed in a delivered summary; they stay pending
	SummaryAt   *time.Time // a summary went out: paces the next one
	Failures    []Failure
	Reschedules []Reschedule
	Holds       []Hold
	Held        []Held
	// WakeQueued says the pass found the thread waiting for a wake slot; any other pass
	// takes the thread out of its agent's wake queue (it no longer waits).
	WakeQueued bool
	Attempts   []Attempt
	// Recovered are in-flight signals of an unfinished run whose redelivery Frames log:
	// their recovery is done.
	Recovered []string
	// HoldUntil keeps the thread leased until then instead of releasing it, so a thread
	// that cannot be processed is not reclaimed in a tight loop.
	HoldUntil *time.Time
}
