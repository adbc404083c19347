package silence

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// Store keeps silences (the store package, on both backends).
type Store interface {
	CreateSilence(ctx context.Context, s Silence) error
	// Silence reads one, or inbox.ErrNotFound.
	Silence(ctx context.Context, id string) (Silence, error)
	// ListSilences lists up to limit silences in state as of now ("" any), newest first.
	ListSilences(ctx context.Context, state State, now time.Time, limit int) ([]Silence, error)
	// ExpireSilence ends silence id at now unless it has ended, and in the same
	// transaction moves the hold of the records it holds to now (the release takes
	// them). It answers the silence as it is then, or inbox.ErrNotFound.
	ExpireSilence(ctx context.Context, id, by string, now time.Time) (Silence, error)
	// LiveSilences lists the silences not ended at now (pending or active).
	LiveSilences(ctx context.Context, now time.Time) ([]Silence, error)
}

// DefaultRefresh is how often every replica reads the live silences again: a silence
// made or expired on one replica holds (or stops holding) on every one within it.
const DefaultRefresh = 500 * time.Millisecond

// maxList bounds a listing.
const maxList = 1000

// Service makes, lists and expires silences, and answers as an inbox.Holder from the
// live silences it keeps in memory: read from the store at Start, every DefaultRefresh
// while it runs, and at once after a local create or expire.
type Service struct {
	service.Base
	service.StartStop
	st      Store
	max     atomic.Int64 // a time.Duration: silences.max_duration, changed by a reload
	newID   func() string
	every   time.Duration
	wait    func(ctx context.Context, d time.Duration) bool
	changed func() // told after a create or an expire (the dispatcher's wake-up)

	mu      sync.RWMutex
	live    []compiled
	payload bool // a live silence has a `when`

	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Refresh service.Signal[error] // a refresh of the loop ended
	}
}

// Option configures a Service.
type Option func(*Service)

// WithIDs injects the id generator.
func WithIDs(newID func() string) Option { return func(s *Service) { s.newID = newID } }

// WithWait replaces the wait between refreshes (nil: sleep); it returns false when ctx
// ended first.
func WithWait(wait func(ctx context.Context, d time.Duration) bool) Option {
	return func(s *Service) { s.wait = wait }
}

// WithChangeHook is told after a silence is made or expired here.
func WithChangeHook(fn func()) Option { return func(s *Service) { s.changed = fn } }

// NewService builds a stopped service; cfg.MaxDuration zero is DefaultMaxDuration.
func NewService(st Store, cfg Config, base service.Base, opts ...Option) *Service {
	s := &Service{Base: base.Component("silences"), st: st, newID: inbox.NewID,
		every: DefaultRefresh, changed: func() {}}
	s.SetConfig(cfg)
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name names the service in start and stop errors.
func (s *Service) Name() string { return "silences" }

// MaxDuration is the longest silence accepted.
func (s *Service) MaxDuration() time.Duration { return time.Duration(s.max.Load()) }

// SetConfig takes a new `silences:` section (a config reload); cfg.MaxDuration zero is
// DefaultMaxDuration. Silences already made keep their ends.
func (s *Service) SetConfig(cfg Config) {
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = DefaultMaxDuration
	}
	s.max.Store(int64(cfg.MaxDuration))
}

// Start reads the live silences, then again every DefaultRefresh until Stop.
func (s *Service) Start(ctx context.Context) error {
	if err := s.Refresh(ctx); err != nil {
		return err
	}
	loop := service.Loop[error]{
		Base: s.Base,
		Pass: func(ctx context.Context) (error, bool, error) {
			err := s.Refresh(ctx)
			return err, false, err
		},
		Failed:    "refresh silences failed",
		Signal:    &s.TestSignals.Refresh,
		Interval:  s.every,
		WaitFirst: true, // Start read them
		Wait:      s.wait,
	}
	return s.StartStop.Start(ctx, loop.Run)
}

// Refresh reads the live silences into memory.
func (s *Service) Refresh(ctx context.Context) error {
	rows, err := s.st.LiveSilences(ctx, s.Now())
	if err != nil {
		return fmt.Errorf("read live silences: %w", err)
	}
	live := make([]compiled, 0, len(rows))
	payload := false
	for _, r := range rows {
		ms, when, errs := compile(r.Input)
		if len(errs) > 0 {
			// Stored silences were validated when made: only a newer, stricter gateway
			// gets here, and the silence is logged rather than dropping every other.
			s.Logger.Warn("silence does not compile, not applied", "silence", r.ID, "error", errs[0].Error())
			continue
		}
		live = append(live, compiled{Silence: r, matchers: ms, when: when})
		payload = payload || when != nil
	}
	s.mu.Lock()
	s.live, s.payload = live, payload
	s.mu.Unlock()
	return nil
}

// Held reports the silence that holds a record like sub at now: of those active and
// matching, the one ending last. An urgent record passes a silence without
// includeUrgent.
func (s *Service) Held(sub inbox.Subject, now time.Time) (inbox.Hold, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var best *compiled
	var env *condition.PolicyEnv
	for i := range s.live {
		c := &s.live[i]
		if now.Before(c.StartsAt) || !now.Before(c.EndsAt) || (sub.Priority == inbox.PriorityUrgent && !c.IncludeUrgent) ||
			(best != nil && !c.EndsAt.After(best.EndsAt)) || !c.matches(sub) {
			continue
		}
		if c.when != nil {
			if env == nil {
				env = sub.Env(now)
			}
			b := sub.Budget
			if b == nil {
				b = condition.NewBudget(condition.DefaultLimits())
			}
			if ok, _ := c.when.Match(env, b); !ok {
				continue
			}
		}
		best = c
	}
	if best == nil {
		return inbox.Hold{}, false
	}
	return Hold(best.ID, best.EndsAt), true
}

// Hold is the hold silence id puts on a record until endsAt.
func Hold(id string, endsAt time.Time) inbox.Hold {
	return inbox.Hold{By: "silence:" + id, Until: endsAt, Reason: "silenced by " + id}
}

// UsesPayload reports whether a live silence has a `when` (the inbox then decodes the
// event's payload for it).
func (s *Service) UsesPayload() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.payload
}

func (c *compiled) matches(sub inbox.Subject) bool {
	for _, m := range c.matchers {
		if !m.matches(sub) {
			return false
		}
	}
	return true
}

// Create validates in and stores it as a new silence, in force here at once.
func (s *Service) Create(ctx context.Context, in Input) (Silence, error) {
	now := s.Now().UTC()
	if err := Validate(&in, now, s.MaxDuration()); err != nil {
		return Silence{}, err
	}
	out := Silence{ID: s.newID(), Input: in, UpdatedAt: now}
	if err := s.st.CreateSilence(ctx, out); err != nil {
		return Silence{}, fmt.Errorf("create silence: %w", err)
	}
	s.afterChange(ctx)
	out.Status = StatusAt(out, now)
	s.Logger.InfoContext(ctx, "silence created", "silence", out.ID, "created_by", out.CreatedBy,
		"starts_at", out.StartsAt, "ends_at", out.EndsAt)
	return out, nil
}

// Get reads one silence, or inbox.ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (Silence, error) {
	out, err := s.st.Silence(ctx, id)
	if err != nil {
		return Silence{}, fmt.Errorf("read silence %s: %w", id, err)
	}
	out.Status = StatusAt(out, s.Now())
	return out, nil
}

// List lists silences in state ("" any), newest first.
func (s *Service) List(ctx context.Context, state State) ([]Silence, error) {
	now := s.Now()
	out, err := s.st.ListSilences(ctx, state, now, maxList)
	if err != nil {
		return nil, fmt.Errorf("list silences: %w", err)
	}
	for i := range out {
		out[i].Status = StatusAt(out[i], now)
	}
	return out, nil
}

// Expire ends silence id now, as Alertmanager's expire does; what it held is released
// by the dispatcher's next pass. An ended silence is answered as it is.
func (s *Service) Expire(ctx context.Context, id, by string) (Silence, error) {
	now := s.Now().UTC()
	out, err := s.st.ExpireSilence(ctx, id, by, now)
	if err != nil {
		return Silence{}, fmt.Errorf("expire silence %s: %w", id, err)
	}
	s.afterChange(ctx)
	out.Status = StatusAt(out, now)
	return out, nil
}

// afterChange applies a local change here at once and wakes the release.
func (s *Service) afterChange(ctx context.Context) {
	if err := s.Refresh(ctx); err != nil {
		// The loop reads them again within DefaultRefresh.
		s.Logger.Warn("refresh silences after a change failed", "error", err.Error())
	}
	s.changed()
}

// StatusAt is a silence's status at now.
func StatusAt(s Silence, now time.Time) Status {
	switch {
	case !now.Before(s.EndsAt):
		return Status{State: StateExpired}
	case now.Before(s.StartsAt):
		return Status{State: StatePending}
	}
	return Status{State: StateActive}
}

// ParseState reads a state filter; "" is any.
func ParseState(v string) (State, error) {
	switch st := State(v); st {
	case "", StatePending, StateActive, StateExpired:
		return st, nil
	}
	return "", fmt.Errorf("state: unknown %q (want pending, active or expired)", v)
}
