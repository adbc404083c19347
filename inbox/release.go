package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/condition"
)

// HoldStore releases records whose hold has ended (held_until <= now): each thread's in
// one transaction, exactly once across replicas, every record decided again by
// redecide as of now and the thread's released records then collapsed by
// CollapseReleased. It releases the records of at most limit threads and answers the
// thread of each record it released.
type HoldStore interface {
	ReleaseHeld(ctx context.Context, now time.Time, redecide RedecideFunc, limit int) ([]ThreadKey, error)
}

// payloadHolder is a Holder whose holds may read the event's payload (a silence's
// `when`): the payload is decoded for it even when no policy rule needs it.
type payloadHolder interface {
	UsesPayload() bool
}

// WithHolds makes the service ask h, after the policy, whether a record it would send
// is held (a silence).
func WithHolds(h Holder) ServiceOption { return func(s *Service) { s.holds = h } }

// WithHeldRecords gives the service the store of held records it releases.
func WithHeldRecords(st HoldStore) ServiceOption { return func(s *Service) { s.held = st } }

// holdsUsePayload reports whether the holder needs the event's payload decoded.
func (s *Service) holdsUsePayload() bool {
	p, ok := s.holds.(payloadHolder)
	return ok && p.UsesPayload()
}

// Sends reports whether a record decided d would be sent to its thread at some point:
// not discarded, not kept in the inbox only.
func (d Decision) Sends() bool { return d.Action != ActionDiscard && d.Action != ActionPersist }

// withHold asks the holder about a decision that would send and, when a hold applies,
// holds it: nothing scheduled, the reason led by the hold's. A decision already held (a
// muting interval) stays as it is.
func (s *Service) withHold(sub Subject, d Decision, now time.Time) Decision {
	return ApplyHolds(s.holds, sub, d, now)
}

// ApplyHolds is d as holder h leaves it at now (h nil: d): a decision that would send
// is held when h holds sub (explain asks it as the inbox does).
func ApplyHolds(h Holder, sub Subject, d Decision, now time.Time) Decision {
	if h == nil || d.Hold != nil || !d.Sends() {
		return d
	}
	hold, ok := h.Held(sub, now)
	if !ok {
		return d
	}
	return HeldDecision(d, hold)
}

// HeldDecision is d held by h.
func HeldDecision(d Decision, h Hold) Decision {
	d.Hold = &h
	d.DeliverAt, d.SummaryAt, d.FullWhenIdle = nil, nil, false
	d.Reason = h.Reason + "; " + d.Reason
	return d
}

// ReleaseHeld decides every record whose hold has ended again, through the policy and
// the holders as of now (another hold may take it), tells each thread's accumulation as
// one summary (CollapseReleased), and tells the change hook of their threads. It
// answers how many records it released (none without WithHeldRecords).
func (s *Service) ReleaseHeld(ctx context.Context) (int, error) {
	st := s.held
	if st == nil {
		return 0, nil
	}
	now := s.now().UTC()
	redecide := func(r Record, p Presence, at time.Time) Decision {
		sub := r.Subject()
		policy := s.policy.Load()
		if policy.UsesExpressions() || s.holdsUsePayload() {
			sub.Payload = condition.DecodePayload(r.Payload)
		}
		d := policy.Decide(sub, p, at)
		d.Reason = fmt.Sprintf("hold by %s ended; %s", r.HeldBy, d.Reason)
		return s.withHold(sub, d, at)
	}
	total := 0
	for {
		ks, err := st.ReleaseHeld(ctx, now, redecide, releaseBatch)
		if err != nil {
			return total, fmt.Errorf("release held records: %w", err)
		}
		total += len(ks)
		if len(ks) > 0 {
			s.changed(ks)
		}
		if distinct(ks) < releaseBatch {
			// Every thread with an ended hold was read (what is left, another replica is
			// releasing). Looping until none is left could spin: a record held again by a
			// hold that has ended too (a replica's silences lag an early expire) is due
			// again at once, and the next pass takes it.
			return total, nil
		}
	}
}

// CollapseReleased makes what one thread accumulated under a hold one summary: when more
// than one of its just released records would be sent (pending, not held again, not
// persist-only, not a message, something scheduled), they all become summary-due at now,
// so the thread hears one notification-summary rather than each in turn. Messages are
// user input and always go in full.
func CollapseReleased(rs []Record, now time.Time) {
	var sent []int
	for i := range rs {
		r := &rs[i]
		if r.Status == StatusPending && r.HeldBy == "" && r.DeliverAs == DeliverAsNotification &&
			r.Action != ActionPersist && r.DueAt() != nil {
			sent = append(sent, i)
		}
	}
	if len(sent) < 2 {
		return
	}
	for _, i := range sent {
		r := &rs[i]
		r.Action, r.DeliverAt, r.SummaryAt, r.FullWhenIdle = ActionSummarize, nil, &now, false
		r.Reason += fmt.Sprintf("; released with %d more of the thread as one summary", len(sent)-1)
	}
}

// Env is what a `when` sees of s at now without a thread presence (a silence's): the
// record, its payload, its thread and the clock; presence reads idle.
func (s Subject) Env(now time.Time) *condition.PolicyEnv { return policyEnv(s, "", now) }

func distinct(ks []ThreadKey) int {
	seen := make(map[ThreadKey]bool, len(ks))
	for _, k := range ks {
		seen[k] = true
	}
	return len(seen)
}
