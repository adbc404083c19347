package inbox

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// ErrNotFound is returned for unknown ids.
var ErrNotFound = errors.New("not found")

// DecideFunc decides for one subject given the thread's presence sampled inside the
// ingest transaction.
type DecideFunc func(s Subject, presence Presence, now time.Time) Decision

// Store persists events and records. ev and ns come as the inbox stores them (clean
// text, hashed keys, bounded: see storable.go). Ingest must, in one transaction: insert the event
// unless its (source, connector, delivery id) exists (then report Duplicate and change
// nothing), and for each notification sample the thread's presence, decide, and either
// merge into a mergeable pending record or insert a new one.
type Store interface {
	Ingest(ctx context.Context, ev *Event, ns []Notification, decide DecideFunc, newID func() string) (IngestResult, error)
}

// Service is the inbox's entry point for connectors and the agent API.
type Service struct {
	store Store
	// policy is swapped by a config reload (SetPolicy); each ingest and release reads it
	// once, so one event is decided by one policy.
	policy atomic.Pointer[Policy]
	now    func() time.Time
	newID  func() string
	// changed is told which threads have new or changed records (the dispatcher wakes).
	changed func([]ThreadKey)
	// overBudget is told of an event whose rules' `when`s ran out of budget.
	overBudget func()
	snoozes    SnoozeStore // nil: nothing is released (see WithSnoozes)
	holds      Holder      // nil: nothing is held (see WithHolds)
	held       HoldStore   // nil: nothing is released (see WithHeldRecords)
}

// ServiceOption configures a Service.
type ServiceOption func(*Service)

// WithClock injects the clock.
func WithClock(now func() time.Time) ServiceOption { return func(s *Service) { s.now = now } }

// WithIDs injects the id generator.
func WithIDs(newID func() string) ServiceOption { return func(s *Service) { s.newID = newID } }

// WithChangeHook is called after commit with the threads whose records changed.
func WithChangeHook(fn func([]ThreadKey)) ServiceOption {
	return func(s *Service) { s.changed = fn }
}

// WithBudgetExceeded is called once for each event whose policy rules' `when`s ran
// out of the event's expression budget (the metric).
func WithBudgetExceeded(fn func()) ServiceOption {
	return func(s *Service) { s.overBudget = fn }
}

// NewService wires a store and a policy.
func NewService(store Store, policy *Policy, opts ...ServiceOption) *Service {
	s := &Service{store: store, now: time.Now, newID: NewID, changed: func([]ThreadKey) {}, overBudget: func() {}}
	s.policy.Store(policy)
	for _, o := range opts {
		o(s)
	}
	return s
}

// SetPolicy puts p in force for the events and releases that begin from now on.
func (s *Service) SetPolicy(p *Policy) { s.policy.Store(p) }

// NewID returns a time-ordered unique id.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// Policy returns the policy in force.
func (s *Service) Policy() *Policy { return s.policy.Load() }

// Ingest stores ev and creates or merges one record per notification, atomically.
// ev.ID and ev.ReceivedAt are filled in when empty.
func (s *Service) Ingest(ctx context.Context, ev *Event, ns []Notification) (IngestResult, error) {
	for i := range ns {
		// An empty priority stays empty: a merge keeps the record's priority, a new
		// record defaults to medium.
		if err := ns[i].Validate(); err != nil {
			return IngestResult{}, fmt.Errorf("notification %d: %w", i, err)
		}
	}
	if ev.ID == "" {
		ev.ID = s.newID()
	}
	if ev.ReceivedAt.IsZero() {
		ev.ReceivedAt = s.now().UTC()
	}
	if ev.Status == "" {
		ev.Status = EventUnrouted
		if len(ns) > 0 {
			ev.Status = EventRouted
		}
	}
	ns = storable(ev, ns)
	var payload any
	policy := s.policy.Load()
	if policy.UsesExpressions() || s.holdsUsePayload() {
		payload = ev.ExprPayload() // once per event, not per record
	}
	budget := policy.NewBudget() // one per event, whatever its number of records
	decide := func(sub Subject, p Presence, _ time.Time) Decision {
		sub.Payload, sub.Budget = payload, budget
		return s.withHold(sub, policy.Decide(sub, p, ev.ReceivedAt), ev.ReceivedAt)
	}
	res, err := s.store.Ingest(ctx, ev, ns, decide, s.newID)
	if budget.Stopped() > 0 {
		s.overBudget()
	}
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s event from %s: %w", ev.Source, ev.Connector, err)
	}
	if !res.Duplicate && len(res.Records) > 0 {
		threads := make([]ThreadKey, 0, len(res.Records))
		for _, o := range res.Records {
			threads = append(threads, o.Thread)
		}
		s.changed(threads)
	}
	return res, nil
}
