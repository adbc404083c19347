package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func newRun(id string, at time.Time, lease time.Duration) agent.Run {
	return agent.Run{ID: id, Thread: thread, Status: agent.RunOpen, Origin: agent.OriginAgent, OpenedAt: at, LeaseUntil: at.Add(lease)}
}

func runFrames(t *testing.T, s *store.DB) []string {
	t.Helper()
	frames, err := store.NewFrames(s).FramesAfter(context.Background(), thread, 0, 100)
	require.NoError(t, err)
	var out []string
	for _, f := range frames {
		require.Equal(t, agent.EventRun, f.Event)
		out = append(out, f.RunID+":"+f.RunStatus)
	}
	return out
}

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		live, err := runs.LiveRun(ctx, thread, t0)
		require.NoError(t, err)
		require.Nil(t, live)

		r, created, err := runs.OpenRun(ctx, newRun("run-1", t0, 5*time.Minute))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, agent.RunOpen, r.Status)

		// A second open adopts the live run and only extends its lease.
		again, created, err := runs.OpenRun(ctx, newRun("run-2", t0.Add(time.Minute), 5*time.Minute))
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, "run-1", again.ID)
		require.Equal(t, t0.Add(6*time.Minute), again.LeaseUntil)

		hb, err := runs.HeartbeatRun(ctx, thread, "run-1", t0.Add(2*time.Minute), t0.Add(7*time.Minute))
		require.NoError(t, err)
		require.Equal(t, t0.Add(7*time.Minute), hb.LeaseUntil)
		_, err = runs.HeartbeatRun(ctx, thread, "nope", t0, t0)
		require.ErrorIs(t, err, agent.ErrRunNotFound)
		other := inbox.ThreadKey{Agent: "coder", Resource: "x", Thread: "y"}
		_, err = runs.HeartbeatRun(ctx, other, "run-1", t0, t0)
		require.ErrorIs(t, err, agent.ErrRunNotFound, "a run is found only on its own thread")

		live, err = runs.LiveRun(ctx, thread, t0.Add(3*time.Minute))
		require.NoError(t, err)
		require.Equal(t, "run-1", live.ID)

		closed, ok, idle, err := runs.CloseRun(ctx, thread, "run-1", agent.RunFinished, "", t0.Add(4*time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, idle)
		require.Equal(t, agent.RunFinished, closed.Status)
		require.Equal(t, t0.Add(4*time.Minute), *closed.ClosedAt)

		// Closing again is a no-op; a heartbeat on a closed run is refused.
		_, ok, idle, err = runs.CloseRun(ctx, thread, "run-1", agent.RunAborted, "", t0.Add(5*time.Minute))
		require.NoError(t, err)
		require.False(t, ok)
		require.False(t, idle)
		_, err = runs.HeartbeatRun(ctx, thread, "run-1", t0.Add(5*time.Minute), t0.Add(9*time.Minute))
		require.ErrorIs(t, err, agent.ErrRunClosed)

		require.Equal(t, []string{"run-1:open", "run-1:finished"}, runFrames(t, s))
	})
}

func TestExpireRuns(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, time.Minute))
		require.NoError(t, err)

		changed, idle, err := runs.ExpireRuns(ctx, t0.Add(59*time.Second))
		require.NoError(t, err)
		require.Empty(t, changed)
		require.Empty(t, idle)

		// Presence turns idle as soon as the lease lapses, before any sweep.
		live, err := runs.LiveRun(ctx, thread, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Nil(t, live)

		changed, idle, err = runs.ExpireRuns(ctx, t0.Add(2*time.Minute))
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{thread}, changed)
		require.Equal(t, []inbox.ThreadKey{thread}, idle)
		r, err := runs.GetRun(ctx, thread, "run-1")
		require.NoError(t, err)
		require.Equal(t, agent.RunExpired, r.Status)
		require.Equal(t, t0.Add(time.Minute), *r.ClosedAt, "closed when the lease lapsed")
		require.Equal(t, []string{"run-1:open", "run-1:expired"}, runFrames(t, s))
	})
}

func TestIdleTransitionMakesFullWhenIdleDue(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0.Add(-time.Second), 5*time.Minute))
		require.NoError(t, err)
		n := comment("review requested", "", "")
		n.Priority = inbox.PriorityHigh
		res := ingest(t, svc, "d1", n)
		rec, err := store.NewAdmin(s).GetRecord(ctx, res.Records[0].RecordID)
		require.NoError(t, err)
		require.True(t, rec.FullWhenIdle, "high while active: summary now, full when idle")

		// Pretend the summary went out: the record waits with nothing scheduled.
		w, err := queue.ThreadWork(ctx, thread, t0, 10)
		require.NoError(t, err)
		require.Equal(t, "run-1", w.RunID)
		require.Len(t, w.Records, 1)
		completeSummary(t, s, w.Records[0])
		due, err := queue.NextDue(ctx, t0)
		require.NoError(t, err)
		require.Equal(t, t0.Add(-time.Second).Add(5*time.Minute), *due, "only the run's lease is ahead")

		_, _, idle, err := runs.CloseRun(ctx, thread, "run-1", agent.RunFinished, "", t0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, idle)
		w, err = queue.ThreadWork(ctx, thread, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, w.RunID)
		require.Len(t, w.Records, 1, "due on the idle transition itself")
		require.Equal(t, rec.ID, w.Records[0].ID)
	})
}

// TestCompleteAfterCloseKeepsIdlePromotion: a run closes while a pass that saw it active
// is still sending the summary; the pass's commit must not unschedule the full delivery
// the idle transition asked for.
func TestCompleteAfterCloseKeepsIdlePromotion(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0.Add(-time.Second), 5*time.Minute))
		require.NoError(t, err)
		n := comment("review requested", "", "")
		n.Priority = inbox.PriorityHigh
		id := ingest(t, svc, "d1", n).Records[0].RecordID
		w, err := queue.ThreadWork(ctx, thread, t0, 10)
		require.NoError(t, err)
		require.Equal(t, "run-1", w.RunID)

		_, _, idle, err := runs.CloseRun(ctx, thread, "run-1", agent.RunFinished, "", t0)
		require.NoError(t, err)
		require.True(t, idle)
		completeSummary(t, s, w.Records[0])

		w, err = queue.ThreadWork(ctx, thread, t0, 10)
		require.NoError(t, err)
		require.Len(t, w.Records, 1, "still due for its full delivery")
		require.Equal(t, id, w.Records[0].ID)
		require.Equal(t, "sum-1", w.Records[0].SummarySignal)
	})
}
