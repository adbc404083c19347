package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// switchHolder holds every record not urgent by "silence:s1" until its until, while on.
type switchHolder struct {
	mu    sync.Mutex
	on    bool
	until time.Time
}

func (h *switchHolder) set(on bool, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.on, h.until = on, until
}

func (h *switchHolder) Held(s inbox.Subject, now time.Time) (inbox.Hold, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.on || s.Priority == inbox.PriorityUrgent || !now.Before(h.until) {
		return inbox.Hold{}, false
	}
	return inbox.Hold{By: "silence:s1", Until: h.until, Reason: "silenced by s1"}, true
}

// heldEnv is a store with an inbox service on a movable clock that holds through h and
// releases held records.
func heldEnv(t *testing.T, b storetest.Backend, clock *time.Time, h inbox.Holder) (*store.DB, *inbox.Service) {
	t.Helper()
	s := storetest.Open(t, b)
	return s, heldService(t, s, clock, h)
}

func heldService(t *testing.T, s *store.DB, clock *time.Time, h inbox.Holder) *inbox.Service {
	inboxStore := store.NewInbox(s)
	t.Helper()
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	return inbox.NewService(inboxStore, pol, inbox.WithClock(func() time.Time { return *clock }), inbox.WithHolds(h), inbox.WithHeldRecords(inboxStore))
}

// A held record is stored pending with what holds it and until when, nothing scheduled:
// never claimed, and the dispatcher wakes when the hold ends. Urgent passes.
func TestHeldRecordIsStoredAndNotDue(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			until := t0.Add(2 * time.Hour)
			h := &switchHolder{on: true, until: until}
			s, svc := heldEnv(t, b, &clock, h)
			reads := store.NewAdmin(s)
			queue := store.NewQueue(s)
			id := ingest(t, svc, "d1", comment("CI failed", "", "")).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusPending, r.Status)
			require.Equal(t, "silence:s1", r.HeldBy)
			require.Equal(t, until, *r.HeldUntil)
			require.True(t, strings.HasPrefix(r.Reason, "silenced by s1; "), r.Reason)
			require.Nil(t, r.DeliverAt)
			require.Nil(t, r.SummaryAt)
			require.Nil(t, r.DueAt())

			claimed, err := queue.ClaimThreads(ctx, "d", t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), 10)
			require.NoError(t, err)
			require.Empty(t, claimed, "a held record is not due")
			next, err := queue.NextDue(ctx, t0)
			require.NoError(t, err)
			require.NotNil(t, next)
			require.Equal(t, until, *next, "the dispatcher wakes when the hold ends")

			urgent := comment("prod down", "", "")
			urgent.Priority = inbox.PriorityUrgent
			uid := ingest(t, svc, "d2", urgent).Records[0].RecordID
			r, err = reads.GetRecord(ctx, uid)
			require.NoError(t, err)
			require.Empty(t, r.HeldBy, "urgent passes")
			require.NotNil(t, r.DueAt())
		})
	}
}

// A merge into a held record while the new decision is held too keeps it held (one
// record, up to date); a hold wins over the earlier due time of the record it merges
// into; a merge the hold no longer takes (urgent) sends it.
func TestMergeIntoHeldRecord(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			until := t0.Add(time.Hour)
			h := &switchHolder{until: until}
			s, svc := heldEnv(t, b, &clock, h)
			reads := store.NewAdmin(s)
			// Due now, not held yet.
			id := ingest(t, svc, "d1", comment("first", "", "pr-7")).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.NotNil(t, r.DueAt())

			h.set(true, until)
			clock = t0.Add(time.Minute)
			res := ingest(t, svc, "d2", comment("second", "", "pr-7"))
			require.True(t, res.Records[0].Merged)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "silence:s1", r.HeldBy, "the silence wins over the earlier due time")
			require.Nil(t, r.DueAt())
			require.True(t, strings.HasPrefix(r.Reason, "silenced by s1"), r.Reason)

			clock = t0.Add(2 * time.Minute)
			ingest(t, svc, "d3", comment("third", "", "pr-7"))
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "silence:s1", r.HeldBy, "still held")
			require.Equal(t, "third", r.Summary)
			require.Equal(t, 3, r.CoalescedCount)
			require.Nil(t, r.DueAt())
			claimed, err := store.NewQueue(s).ClaimThreads(ctx, "d", clock, clock.Add(time.Minute), 10)
			require.NoError(t, err)
			require.Empty(t, claimed)

			urgent := comment("prod down", "", "pr-7")
			urgent.Priority = inbox.PriorityUrgent
			ingest(t, svc, "d4", urgent)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Empty(t, r.HeldBy, "urgent passes the silence")
			require.Nil(t, r.HeldUntil)
			require.NotNil(t, r.DueAt())
		})
	}
}

// When a hold ends, what it held is decided again per thread in one transaction: a
// thread with several records gets them all summary-due now (one summary), a thread
// with one gets its own decision; a record another hold takes stays held; each once.
func TestReleaseHeldCollapsesEachThread(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			until := t0.Add(time.Hour)
			h := &switchHolder{on: true, until: until}
			s, svc := heldEnv(t, b, &clock, h)
			reads := store.NewAdmin(s)
			var many []string
			for i, sum := range []string{"one", "two", "three"} {
				many = append(many, ingest(t, svc, "m"+string(rune('0'+i)), comment(sum, "", "")).Records[0].RecordID)
			}
			lone := comment("alone", "", "")
			lone.Thread = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
			loneID := ingest(t, svc, "l1", lone).Records[0].RecordID

			clock = until.Add(-time.Second)
			n, err := svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "not before its end")

			clock = until
			h.set(false, until)
			n, err = svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Equal(t, 4, n)
			for _, id := range many {
				r, err := reads.GetRecord(ctx, id)
				require.NoError(t, err)
				require.Empty(t, r.HeldBy)
				require.Nil(t, r.HeldUntil)
				require.Equal(t, inbox.ActionSummarize, r.Action)
				require.Equal(t, until, *r.SummaryAt, "summary-due now")
				require.Nil(t, r.DeliverAt)
				require.Contains(t, r.Reason, "hold by silence:s1 ended")
				require.Contains(t, r.Reason, "released with 2 more of the thread as one summary")
			}
			r, err := reads.GetRecord(ctx, loneID)
			require.NoError(t, err)
			require.Equal(t, inbox.ActionDeliver, r.Action, "alone in its thread: its own decision")
			require.Equal(t, until, *r.DeliverAt)

			n, err = svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "released once")
		})
	}
}

// A record released while another hold is in force is held again by it.
func TestReleaseHeldHoldsAgain(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			h := &switchHolder{on: true, until: t0.Add(time.Hour)}
			s, svc := heldEnv(t, b, &clock, h)
			id := ingest(t, svc, "d1", comment("one", "", "")).Records[0].RecordID
			clock = t0.Add(time.Hour)
			h.set(true, t0.Add(3*time.Hour)) // a later silence
			n, err := svc.ReleaseHeld(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			r, err := store.NewAdmin(s).GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "silence:s1", r.HeldBy)
			require.Equal(t, t0.Add(3*time.Hour), *r.HeldUntil)
			require.True(t, strings.HasPrefix(r.Reason, "silenced by s1; hold by silence:s1 ended"), r.Reason)
			require.Nil(t, r.DueAt())
		})
	}
}

// Replicas releasing at once release every record exactly once.
func TestReleaseHeldOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			until := t0.Add(time.Hour)
			h := &switchHolder{on: true, until: until}
			s1, svc1 := heldEnv(t, b, &clock, h)
			// SQLite serves one process: there the second replica is a second service
			// over the same store (the database refuses a second process).
			s2 := s1
			if b.Config.Driver == store.DriverPostgres {
				s2 = storetest.Open(t, b)
			}
			svc2 := heldService(t, s2, &clock, h)
			const threads, per = 8, 5
			for i := range threads {
				for j := range per {
					n := comment("c", "", "")
					n.Thread.Thread = "t" + string(rune('a'+i))
					ingest(t, svc1, n.Thread.Thread+string(rune('0'+j)), n)
				}
			}
			clock = until
			h.set(false, until)
			var wg sync.WaitGroup
			counts := make([]int, 2)
			for i, svc := range []*inbox.Service{svc1, svc2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, err := svc.ReleaseHeld(ctx)
					require.NoError(t, err)
					counts[i] = n
				}()
			}
			wg.Wait()
			require.Equal(t, threads*per, counts[0]+counts[1], "each record released once")
			claimed, err := store.NewQueue(s1).ClaimThreads(ctx, "d", until, until.Add(time.Minute), 100)
			require.NoError(t, err)
			require.Len(t, claimed, threads)
			_ = s2
		})
	}
}
