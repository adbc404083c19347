package inbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/condition"
)

// ErrNotSnoozable is the answer for snoozing a record that is not pending, or is a
// net-state lane's (its lane always reports the latest state: a newer one supersedes it).
var ErrNotSnoozable = errors.New("not snoozable")

// MaxSnooze is the longest a record may be snoozed.
const MaxSnooze = 30 * 24 * time.Hour

// ParseSnoozeUntil reads a snooze's until: an RFC 3339 time after now and at most
// MaxSnooze ahead. Its errors name the field.
func ParseSnoozeUntil(raw string, now time.Time) (time.Time, error) {
	if raw == "" {
		return time.Time{}, fmt.Errorf("until: required (an RFC 3339 time, at most 30 days ahead)")
	}
	until, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("until: want an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", raw)
	}
	return until.UTC(), CheckSnoozeUntil(until, now)
}

// CheckSnoozeUntil reports whether until is after now and at most MaxSnooze ahead.
func CheckSnoozeUntil(until, now time.Time) error {
	switch {
	case !until.After(now):
		return fmt.Errorf("until: %s is not in the future", until.UTC().Format(time.RFC3339))
	case until.Sub(now) > MaxSnooze:
		return fmt.Errorf("until: %s is more than 30 days ahead", until.UTC().Format(time.RFC3339))
	}
	return nil
}

// Release ends r's snooze with decision d, made as of now as for a record that just
// arrived: its schedule, retries and wait for idle start over (a discard discards it).
func (r *Record) Release(d Decision, now time.Time) {
	r.Status, r.SnoozedUntil, r.UpdatedAt = StatusPending, nil, now
	r.NextAttemptAt, r.FullWhenIdle = nil, false
	r.apply(d)
	if d.Action == ActionDiscard {
		r.Status, r.DiscardedAt = StatusDiscarded, &now
	}
}

// RedecideFunc decides a released record again given its thread's presence sampled in
// the releasing transaction.
type RedecideFunc func(r Record, presence Presence, now time.Time) Decision

// SnoozeStore releases due snoozed records: each one, exactly once (other replicas
// skip it), back to pending with redecide's decision as of now. It releases at most
// limit and answers how many, with their threads.
type SnoozeStore interface {
	ReleaseSnoozed(ctx context.Context, now time.Time, redecide RedecideFunc, limit int) ([]ThreadKey, error)
}

// releaseBatch bounds one release transaction.
const releaseBatch = 256

// WithSnoozes gives the service the store of snoozed records it releases.
func WithSnoozes(st SnoozeStore) ServiceOption { return func(s *Service) { s.snoozes = st } }

// ReleaseSnoozed decides every snoozed record whose time has come again, through the
// policy as if it had just arrived (rules, presence and the clock as of now), and tells
// the change hook of their threads. It answers how many it released (none without
// WithSnoozes).
func (s *Service) ReleaseSnoozed(ctx context.Context) (int, error) {
	st := s.snoozes
	if st == nil {
		return 0, nil
	}
	now := s.now().UTC()
	policy := s.policy.Load()
	redecide := func(r Record, p Presence, at time.Time) Decision {
		sub := r.Subject()
		if policy.UsesExpressions() {
			sub.Payload = condition.DecodePayload(r.Payload)
		}
		d := policy.Decide(sub, p, at)
		d.Reason = "snooze ended; " + d.Reason
		return d
	}
	total := 0
	for {
		ks, err := st.ReleaseSnoozed(ctx, now, redecide, releaseBatch)
		if err != nil {
			return total, fmt.Errorf("release snoozed records: %w", err)
		}
		total += len(ks)
		if len(ks) > 0 {
			s.changed(ks)
		}
		if len(ks) == 0 {
			// Nothing more (or what is left, another replica is releasing).
			return total, nil
		}
	}
}
