package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/service"
)

// Scheduler defaults.
const (
	// DefaultInterval is how often each replica looks for due fires: a schedule made,
	// paused or resumed on one replica is in force on every one within it.
	DefaultInterval = time.Second
	// DefaultLease is how long a claimed fire stays with the replica sending it; after a
	// crash, or a target that did not take it, the fire is sent again (same id) once it
	// lapses, until the schedule's next fire is due.
	DefaultLease = 2 * time.Minute
	// DefaultGrace is how late a fire may be sent; later, it was missed (no gateway ran):
	// skipped, or sent once with catch_up: last.
	DefaultGrace = time.Minute
	// defaultBatch is how many due schedules a pass reads at once.
	defaultBatch = 100
)

// Scheduler fires due schedules, in a goroutine it owns between Start and Stop. Every
// replica runs one on the same rows: a fire goes to the replica whose claim lands
// first, and its signal id makes a resend after a crash the same signal.
type Scheduler struct {
	service.Base
	service.StartStop
	svc      *Service
	config   []Spec
	interval time.Duration
	lease    time.Duration
	grace    time.Duration
	wait     func(ctx context.Context, d time.Duration) bool

	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Pass service.Signal[Pass] // a pass of the loop ended
	}
}

// Pass is what one pass did: the signal ids it sent, the schedules whose missed fires
// it skipped, and its error.
type Pass struct {
	Fired   []string
	Skipped []string
	Err     error
}

// Option configures a Scheduler.
type Option func(*Scheduler)

// WithWait replaces the wait between passes (nil: sleep); it returns false when ctx
// ended first.
func WithWait(wait func(ctx context.Context, d time.Duration) bool) Option {
	return func(s *Scheduler) { s.wait = wait }
}

// WithLease sets how long a claimed fire stays with its replica.
func WithLease(d time.Duration) Option { return func(s *Scheduler) { s.lease = d } }

// NewScheduler builds a stopped scheduler; config are config.yaml's schedules, made rows
// by Start.
func NewScheduler(svc *Service, config []Spec, base service.Base, opts ...Option) *Scheduler {
	s := &Scheduler{Base: base.Component("scheduler"), svc: svc, config: config, interval: DefaultInterval,
		lease: DefaultLease, grace: DefaultGrace}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name names the service in start and stop errors.
func (s *Scheduler) Name() string { return "scheduler" }

// Start makes the config's schedules rows, then runs a pass now (a missed fire of a
// catch_up: last schedule goes out) and every interval until Stop.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.svc.SyncConfig(ctx, s.config); err != nil {
		return fmt.Errorf("schedules from config: %w", err)
	}
	loop := service.Loop[Pass]{
		Base: s.Base,
		Pass: func(ctx context.Context) (Pass, bool, error) {
			p := s.RunOnce(ctx)
			return p, false, p.Err
		},
		Failed:   "schedule pass failed",
		Signal:   &s.TestSignals.Pass,
		Interval: s.interval,
		Wait:     s.wait,
	}
	return s.StartStop.Start(ctx, loop.Run)
}

// RunOnce fires every schedule due now.
func (s *Scheduler) RunOnce(ctx context.Context) Pass {
	now := s.Now().UTC()
	var p Pass
	var errs []error
	due, err := s.svc.store.DueSchedules(ctx, now, defaultBatch)
	if err != nil {
		p.Err = fmt.Errorf("read due schedules: %w", err)
		return p
	}
	for _, sc := range due {
		id, skipped, err := s.one(ctx, sc, now)
		if id != "" {
			p.Fired = append(p.Fired, id)
		}
		if skipped {
			p.Skipped = append(p.Skipped, sc.ID)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", sc.ID, err))
		}
	}
	p.Err = errors.Join(errs...)
	return p
}

// one handles a due schedule: it sends its fire (the id sent), skips missed fires, or
// leaves it to the replica that claimed it first.
func (s *Scheduler) one(ctx context.Context, sc Schedule, now time.Time) (string, bool, error) {
	c, err := ParseCron(sc.Cron, sc.Timezone)
	if err != nil {
		return "", false, err // checked when stored: only a zone database without the zone
	}
	next := c.Next(now)
	var fire time.Time
	switch {
	case sc.ClaimFireAt != nil && c.Next(*sc.ClaimFireAt).After(now):
		// A claim that lapsed (a crash, a target that did not take it): the same fire
		// again, while it is still the latest. The thread keeps its id once.
		fire = *sc.ClaimFireAt
	default:
		latest := c.Latest(*sc.NextFireAt, now)
		if !latest.IsZero() && (now.Sub(latest) <= s.grace || sc.CatchUp == CatchUpLast) {
			fire = latest
		}
	}
	if fire.IsZero() {
		ok, err := s.svc.store.SkipFires(ctx, sc, next)
		if err == nil && ok {
			s.Logger.WarnContext(ctx, "schedule missed fires", "schedule", sc.ID, "since", sc.NextFireAt, "next_fire_at", next)
		}
		return "", ok, err
	}
	ok, err := s.svc.store.ClaimFire(ctx, sc, fire, now.Add(s.lease))
	if err != nil || !ok {
		return "", false, err // !ok: another replica has it
	}
	id := FireID(sc.ID, fire)
	res, err := s.svc.Fire(ctx, sc.Spec, fire)
	if err != nil && !refused(err) {
		// The target did not take it, or the database failed: kept claimed, and sent
		// again once the lease lapses.
		return "", false, fmt.Errorf("fire %s: %w", id, err)
	}
	msg := ""
	if err != nil {
		// The thread cannot take it (an agent's limit, a conflicting id): sending again
		// would not help.
		msg = err.Error()
		s.Logger.ErrorContext(ctx, "schedule fire refused", "schedule", sc.ID, "signal_id", id, "error", msg)
	} else {
		s.Logger.InfoContext(ctx, "schedule fired", "schedule", sc.ID, "signal_id", id, "action", string(res.Action))
	}
	if _, ferr := s.svc.store.FinishFire(ctx, sc.ID, fire, next, msg); ferr != nil {
		return id, false, fmt.Errorf("finish fire %s: %w", id, ferr)
	}
	if msg != "" {
		return "", false, nil
	}
	return id, false, nil
}

// refused reports whether the agent refused a fire for good (an invalid signal, a
// conflicting id): sending it again would be refused again.
func refused(err error) bool {
	var ae *agent.Error
	return errors.Is(err, agent.ErrInvalid) || (errors.As(err, &ae) && ae.Kind != 0)
}
