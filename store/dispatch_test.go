package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func completeSummary(t *testing.T, s *store.DB, r inbox.Record) {
	t.Helper()
	require.NoError(t, store.NewQueue(s).CompleteThread(context.Background(), "nobody", delivery.Outcome{
		Thread: r.Thread, Now: t0, SummaryAt: &t0,
		Summarized: []delivery.Sent{{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, SignalID: "sum-1"}},
	}))
}

func threadN(i int) inbox.ThreadKey {
	return inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "t" + string(rune('a'+i))}
}

func TestClaimThreads(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		for i := range 5 {
			n := comment("c", "", "")
			n.Thread = threadN(i)
			ingest(t, svc, "d"+string(rune('a'+i)), n)
		}
		// Two dispatchers claiming at once never share a thread.
		var mu sync.Mutex
		claimed := map[inbox.ThreadKey]string{}
		var wg sync.WaitGroup
		for _, owner := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					keys, err := queue.ClaimThreads(ctx, owner, t0, t0.Add(time.Minute), 2)
					require.NoError(t, err)
					mu.Lock()
					for _, k := range keys {
						require.NotContains(t, claimed, k, "claimed twice")
						claimed[k] = owner
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, claimed, 5)

		// Leased threads are not claimable until the lease lapses, then they are again.
		keys, err := queue.ClaimThreads(ctx, "c", t0.Add(30*time.Second), t0.Add(90*time.Second), 10)
		require.NoError(t, err)
		require.Empty(t, keys)
		next, err := queue.NextDue(ctx, t0)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Minute), *next, "a foreign lease lapsing is the next event")
		keys, err = queue.ClaimThreads(ctx, "c", t0.Add(time.Minute), t0.Add(2*time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, keys, 5, "a crashed owner's leases are reclaimed")

		// Releasing by completing makes them claimable at once.
		require.NoError(t, queue.CompleteThread(ctx, "c", delivery.Outcome{Thread: keys[0], Now: t0.Add(time.Minute)}))
		keys, err = queue.ClaimThreads(ctx, "d", t0.Add(time.Minute), t0.Add(2*time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, keys, 1)
	})
}

func TestClaimOrdersByDue(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		// Later due first in insertion order: thread b is due before thread a.
		queue := store.NewQueue(s)
		pol, err := inbox.NewPolicy(inbox.PolicyConfig{Rules: []inbox.Rule{
			{Match: inbox.RuleMatch{Kind: inbox.StringList{"later"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDefer, After: time.Minute}},
		}})
		require.NoError(t, err)
		svc2 := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
		a := comment("a", "", "")
		a.Thread, a.Kind = threadN(0), "later"
		ingest(t, svc2, "a", a)
		b := comment("b", "", "")
		b.Thread = threadN(1)
		ingest(t, svc2, "b", b)
		keys, err := queue.ClaimThreads(ctx, "x", t0.Add(2*time.Minute), t0.Add(3*time.Minute), 1)
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{threadN(1)}, keys)
		next, err := queue.NextDue(ctx, t0)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Minute), *next)
	})
}

func TestCompleteThread(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		reads := store.NewAdmin(s)
		queue := store.NewQueue(s)
		full := ingest(t, svc, "d1", comment("full", "", "")).Records[0].RecordID
		low := comment("summarised", "", "k2")
		low.Priority = inbox.PriorityLow // held for a summary
		summ := ingest(t, svc, "d2", low).Records[0].RecordID
		fail := ingest(t, svc, "d3", comment("failing", "", "")).Records[0].RecordID
		dead := ingest(t, svc, "d4", comment("dead", "", "")).Records[0].RecordID
		moved := ingest(t, svc, "d5", comment("moved", "", "k5")).Records[0].RecordID
		keys, err := queue.ClaimThreads(ctx, "me", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{thread}, keys)
		w, err := queue.ThreadWork(ctx, thread, t0, 10)
		require.NoError(t, err)
		require.Len(t, w.Records, 5)
		byID := map[string]inbox.Record{}
		for _, r := range w.Records {
			byID[r.ID] = r
		}
		// A merge after the pass read the records: its content must stay pending.
		ingest(t, svc, "d6", comment("moved again", "", "k5"))

		retryAt := t0.Add(2 * time.Second)
		later := t0.Add(time.Hour)
		require.NoError(t, queue.CompleteThread(ctx, "me", delivery.Outcome{
			Thread: thread, Now: t0, SummaryAt: &t0,
			Delivered:  []delivery.Sent{{RecordID: full, UpdatedAt: byID[full].UpdatedAt, Coalesced: 1, SignalID: "sig-full"}},
			Summarized: []delivery.Sent{{RecordID: summ, UpdatedAt: byID[summ].UpdatedAt, Coalesced: 1, SignalID: "sig-sum"}},
			Failures: []delivery.Failure{
				{RecordID: fail, Attempts: 1, NextAttemptAt: &retryAt, Error: "boom"},
				{RecordID: dead, Attempts: 8, Error: "gone", Failed: true},
			},
			Reschedules: []delivery.Reschedule{{RecordID: moved, UpdatedAt: byID[moved].UpdatedAt, Coalesced: 1, DueAt: &later}},
			Attempts: []delivery.Attempt{{Thread: thread, Target: "stream", SignalID: "sig-full", RecordIDs: []string{full},
				Attempt: 1, Outcome: delivery.OutcomeDelivered, At: t0}},
		}))
		get := func(id string) inbox.Record {
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			return r
		}
		r := get(full)
		require.Equal(t, inbox.StatusDelivered, r.Status)
		require.Equal(t, "sig-full", r.SignalID)
		require.Equal(t, t0, *r.DeliveredAt)

		r = get(summ)
		require.Equal(t, inbox.StatusPending, r.Status, "summarised records stay pending")
		require.Equal(t, "sig-sum", r.SummarySignal)
		require.Nil(t, r.SummaryAt)

		r = get(fail)
		require.Equal(t, inbox.StatusPending, r.Status)
		require.Equal(t, 1, r.Attempts)
		require.Equal(t, retryAt, *r.NextAttemptAt)
		require.Equal(t, "boom", r.LastError)

		r = get(dead)
		require.Equal(t, inbox.StatusFailed, r.Status)
		require.Equal(t, "gone", r.LastError)

		r = get(moved)
		require.Equal(t, "moved again", r.Summary)
		require.Equal(t, 2, r.CoalescedCount)
		w, err = queue.ThreadWork(ctx, thread, t0, 10)
		require.NoError(t, err)
		require.Len(t, w.Records, 1, "the merged record is still due now, not rescheduled")
		require.Equal(t, moved, w.Records[0].ID)
		require.Equal(t, int64(1), w.Summaries)
		require.Equal(t, t0, *w.LastSummaryAt)

		next, err := queue.NextDue(ctx, t0)
		require.NoError(t, err)
		require.Equal(t, t0, *next)

		// A failing record's merge keeps its backoff.
		ingest(t, svc, "d7", comment("failing", "", ""))
		atts, err := reads.ListAttempts(ctx, delivery.AttemptFilter{Thread: &thread})
		require.NoError(t, err)
		require.Len(t, atts, 1)
		require.Equal(t, []string{full}, atts[0].RecordIDs)
		atts, err = reads.ListAttempts(ctx, delivery.AttemptFilter{RecordID: full})
		require.NoError(t, err)
		require.Len(t, atts, 1)
	})
}

func TestCompleteThreadHold(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		ingest(t, svc, "d1", comment("x", "", ""))
		keys, err := queue.ClaimThreads(ctx, "me", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, keys, 1)
		hold := t0.Add(5 * time.Second)
		require.NoError(t, queue.CompleteThread(ctx, "me", delivery.Outcome{Thread: thread, Now: t0, HoldUntil: &hold}))
		keys, err = queue.ClaimThreads(ctx, "other", t0.Add(4*time.Second), t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, keys)
		keys, err = queue.ClaimThreads(ctx, "other", hold, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, keys, 1)
		// The old owner's completion does not release the new owner's lease.
		require.NoError(t, queue.CompleteThread(ctx, "me", delivery.Outcome{Thread: thread, Now: hold}))
		keys, err = queue.ClaimThreads(ctx, "third", hold, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, keys)
	})
}

func TestThreadsWorkReadsManyThreadsAtOnce(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		_, _, err := store.NewRuns(s).OpenRun(ctx, newRun("run-1", t0.Add(-time.Second), 5*time.Minute))
		require.NoError(t, err)
		ingest(t, svc, "a1", comment("on the active thread", "", ""))
		busy := threadN(1)
		for i, p := range []inbox.Priority{inbox.PriorityMedium, inbox.PriorityUrgent, inbox.PriorityHigh} {
			n := comment("busy "+string(p), "", "")
			n.Thread, n.Priority = busy, p
			ingest(t, svc, "b"+string(rune('1'+i)), n)
		}
		quiet := threadN(2)
		n := comment("quiet", "", "")
		n.Thread = quiet
		ingest(t, svc, "c1", n)

		// One Work per key, in the keys' order, each with its own run and at most limit
		// records, most urgent first.
		ws, err := queue.ThreadsWork(ctx, []inbox.ThreadKey{quiet, thread, busy}, t0, 2)
		require.NoError(t, err)
		require.Len(t, ws, 3)
		require.Equal(t, quiet, ws[0].Thread)
		require.Empty(t, ws[0].RunID)
		require.Len(t, ws[0].Records, 1)
		require.Equal(t, "quiet", ws[0].Records[0].Summary)
		require.Equal(t, thread, ws[1].Thread)
		require.Equal(t, "run-1", ws[1].RunID)
		require.Len(t, ws[1].Records, 1)
		require.Equal(t, busy, ws[2].Thread)
		require.Empty(t, ws[2].RunID)
		require.Len(t, ws[2].Records, 2, "the limit is per thread")
		require.Equal(t, []inbox.Priority{inbox.PriorityUrgent, inbox.PriorityHigh},
			[]inbox.Priority{ws[2].Records[0].Priority, ws[2].Records[1].Priority})
		for _, w := range ws {
			require.False(t, w.CreatedAt.IsZero(), "thread row read for %s", w.Thread)
			for _, r := range w.Records {
				require.Equal(t, w.Thread, r.Thread)
			}
		}
		// Nothing due yet: the threads are read, with no records.
		ws, err = queue.ThreadsWork(ctx, []inbox.ThreadKey{busy}, t0.Add(-time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, ws[0].Records)

		_, err = queue.ThreadsWork(ctx, []inbox.ThreadKey{busy, threadN(9)}, t0, 10)
		require.Error(t, err, "a thread that does not exist")
	})
}

// A lease is renewed only by the owner still holding it: not after another dispatcher
// claimed the thread, nor after a pass released it.
func TestRenewThread(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		ingest(t, svc, "d1", comment("c", "", ""))
		k := comment("c", "", "").Thread
		keys, err := queue.ClaimThreads(ctx, "a", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{k}, keys)
		ok, err := queue.RenewThread(ctx, "a", k, t0.Add(2*time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
		keys, err = queue.ClaimThreads(ctx, "b", t0.Add(90*time.Second), t0.Add(3*time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, keys, "the renewed lease still holds where the first would have lapsed")

		keys, err = queue.ClaimThreads(ctx, "b", t0.Add(2*time.Minute), t0.Add(3*time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{k}, keys)
		ok, err = queue.RenewThread(ctx, "a", k, t0.Add(4*time.Minute))
		require.NoError(t, err)
		require.False(t, ok, "another dispatcher holds it now")

		require.NoError(t, queue.CompleteThread(ctx, "b", delivery.Outcome{Thread: k, Now: t0.Add(2 * time.Minute)}))
		ok, err = queue.RenewThread(ctx, "b", k, t0.Add(4*time.Minute))
		require.NoError(t, err)
		require.False(t, ok, "released")
	})
}
