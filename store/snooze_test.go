package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// snoozeEnv is a store with an inbox service on a movable clock that releases snoozes.
func snoozeEnv(t *testing.T, b storetest.Backend, clock *time.Time, cfg inbox.PolicyConfig) (*store.DB, *inbox.Service) {
	t.Helper()
	s := storetest.Open(t, b)
	inboxStore := store.NewInbox(s)
	pol, err := inbox.NewPolicy(cfg)
	require.NoError(t, err)
	return s, inbox.NewService(inboxStore, pol, inbox.WithClock(func() time.Time { return *clock }), inbox.WithSnoozes(inboxStore))
}

// A snoozed record is out of every pending path: no claim, no backlog, no retention,
// no other thread's reach; a second snooze, a delivered record or a lane's is refused.
func TestSnoozeHidesAPendingRecord(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			s, svc := snoozeEnv(t, b, &clock, inbox.PolicyConfig{})
			queue := store.NewQueue(s)
			records := store.NewRecords(s)
			id := ingest(t, svc, "d1", comment("CI failed", "", "")).Records[0].RecordID
			until := t0.Add(2 * time.Hour)

			other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
			_, err := records.SnoozeRecord(ctx, other, id, until, t0)
			require.ErrorIs(t, err, inbox.ErrNotFound, "another thread's record")

			rec, err := records.SnoozeRecord(ctx, thread, id, until, t0)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusSnoozed, rec.Status)
			require.Equal(t, until, *rec.SnoozedUntil)

			claimed, err := queue.ClaimThreads(ctx, "d", t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), 10)
			require.NoError(t, err)
			require.Empty(t, claimed, "a snoozed record is not due")
			next, err := queue.NextDue(ctx, t0)
			require.NoError(t, err)
			require.NotNil(t, next)
			require.Equal(t, until, *next, "the dispatcher wakes when the snooze ends")

			pending, err := records.ListThreadRecords(ctx, agent.RecordQuery{Thread: thread, Statuses: []inbox.Status{inbox.StatusPending}})
			require.NoError(t, err)
			require.Empty(t, pending)
			snoozed, err := records.ListThreadRecords(ctx, agent.RecordQuery{Thread: thread, Statuses: []inbox.Status{inbox.StatusSnoozed}})
			require.NoError(t, err)
			require.Len(t, snoozed, 1)
			threads, _, err := store.NewAdmin(s).ListThreads(ctx, agent.ThreadFilter{}, t0)
			require.NoError(t, err)
			require.Len(t, threads, 1)
			require.Zero(t, threads[0].Pending.Total, "not the thread's backlog")

			n, err := store.NewRetention(s).DeleteTerminalRecordsBefore(ctx, t0.Add(365*24*time.Hour), 100)
			require.NoError(t, err)
			require.Zero(t, n, "retention keeps a snoozed record")

			rec, err = records.SnoozeRecord(ctx, thread, id, until.Add(time.Hour), t0)
			require.ErrorIs(t, err, inbox.ErrNotSnoozable, "already snoozed")
			require.Equal(t, until, *rec.SnoozedUntil, "the first snooze stands")

			done := ingest(t, svc, "d2", comment("done", "", "")).Records[0].RecordID
			require.NoError(t, records.SetRecordStatus(ctx, done, inbox.StatusDelivered, t0))
			_, err = records.SnoozeRecord(ctx, thread, done, until, t0)
			require.ErrorIs(t, err, inbox.ErrNotSnoozable, "delivered")

			lane := comment("CI failing", "", "")
			lane.NetKey, lane.State, lane.RestState = "ci:main", "failure", "success"
			laneID := ingest(t, svc, "d3", lane).Records[0].RecordID
			rec, err = records.SnoozeRecord(ctx, thread, laneID, until, t0)
			require.ErrorIs(t, err, inbox.ErrNotSnoozable, "a lane's record")
			require.Equal(t, inbox.StatusPending, rec.Status)

			// A pass holding the thread may be sending a due record right now: refused
			// until its lease is over.
			inflight := ingest(t, svc, "d4", comment("in flight", "", "")).Records[0].RecordID
			claimed, err = queue.ClaimThreads(ctx, "d", t0, t0.Add(time.Minute), 10)
			require.NoError(t, err)
			require.Equal(t, []inbox.ThreadKey{thread}, claimed)
			rec, err = records.SnoozeRecord(ctx, thread, inflight, until, t0)
			require.ErrorIs(t, err, inbox.ErrNotSnoozable, "due in a leased thread")
			require.Equal(t, inbox.StatusPending, rec.Status)
			rec, err = records.SnoozeRecord(ctx, thread, inflight, until, t0.Add(2*time.Minute))
			require.NoError(t, err, "the lease is over")
			require.Equal(t, inbox.StatusSnoozed, rec.Status)
		})
	}
}

// A duplicate or update of a snoozed record merges into it and stays snoozed (one
// record, up to date, back at its time); an urgent one ends the snooze with its decision.
func TestSnoozedRecordAbsorbsMerges(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			s, svc := snoozeEnv(t, b, &clock, inbox.PolicyConfig{})
			reads := store.NewAdmin(s)
			queue := store.NewQueue(s)
			id := ingest(t, svc, "d1", comment("first", "", "pr-7")).Records[0].RecordID
			_, err := store.NewRecords(s).SnoozeRecord(ctx, thread, id, t0.Add(time.Hour), t0)
			require.NoError(t, err)

			clock = t0.Add(time.Minute)
			res := ingest(t, svc, "d2", comment("second", "", "pr-7"))
			require.True(t, res.Records[0].Merged, "merged into the snoozed record, not a new one")
			require.Equal(t, id, res.Records[0].RecordID)
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusSnoozed, r.Status)
			require.Equal(t, "second", r.Summary)
			require.Equal(t, 2, r.CoalescedCount)
			require.Nil(t, r.DueAt())
			claimed, err := queue.ClaimThreads(ctx, "d", clock, clock.Add(time.Minute), 10)
			require.NoError(t, err)
			require.Empty(t, claimed, "the merge did not schedule it")

			urgent := comment("prod is down", "", "pr-7")
			urgent.Priority = inbox.PriorityUrgent
			res = ingest(t, svc, "d3", urgent)
			require.True(t, res.Records[0].Merged)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusPending, r.Status, "urgent ends the snooze")
			require.Nil(t, r.SnoozedUntil)
			require.Equal(t, inbox.ActionDeliver, r.Action)
			require.Contains(t, r.Reason, "snooze ended by an urgent update")
			claimed, err = queue.ClaimThreads(ctx, "d", clock, clock.Add(time.Minute), 10)
			require.NoError(t, err)
			require.Equal(t, []inbox.ThreadKey{thread}, claimed)
		})
	}
}

// At its time a snoozed record is decided again as if it had just arrived: the policy's
// rules and the thread's presence as of then, once.
func TestSnoozeReleaseDecidesAgain(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			clock := t0
			// From 10:00 comments are held for a summary; before, the default table applies.
			s, svc := snoozeEnv(t, b, &clock, inbox.PolicyConfig{Rules: []inbox.Rule{{
				Match: inbox.RuleMatch{Kind: inbox.StringList{"comment"}}, When: `now.Hour() >= 10`,
				ActionSpec: inbox.ActionSpec{Action: inbox.ActionSummarize}}}})
			reads := store.NewAdmin(s)
			id := ingest(t, svc, "d1", comment("first", "", "")).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, inbox.ActionDeliver, r.Action, "idle medium at 09:00")
			until := t0.Add(90 * time.Minute)
			_, err = store.NewRecords(s).SnoozeRecord(ctx, thread, id, until, t0)
			require.NoError(t, err)

			clock = until.Add(-time.Second)
			n, err := svc.ReleaseSnoozed(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "not before its time")

			clock = until
			n, err = svc.ReleaseSnoozed(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			r, err = reads.GetRecord(ctx, id)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusPending, r.Status)
			require.Nil(t, r.SnoozedUntil)
			require.Equal(t, inbox.ActionSummarize, r.Action, "the rule in force at 10:30 decides")
			require.Contains(t, r.Reason, "snooze ended; rule[0]")
			require.Equal(t, until, *r.DueAt())

			n, err = svc.ReleaseSnoozed(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "released once")
		})
	}
}
