package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

func logSignal(t *testing.T, s *store.DB, id, runID string, action agent.Behavior, at time.Time) {
	t.Helper()
	d := agent.Handoff{Thread: thread, Behavior: action, RunID: runID,
		Signal: agent.Signal{ID: id, Type: agent.TypeReactive, TagName: "note", Contents: id}}
	require.NoError(t, store.NewQueue(s).CompleteThread(context.Background(), "", delivery.Outcome{Thread: thread, Now: at,
		Frames: []agent.Frame{agent.SignalFrame(d, at)}}))
}

func pendingIDs(t *testing.T, s *store.DB) []string {
	t.Helper()
	recs, err := store.NewQueue(s).PendingRecoveries(context.Background(), thread, 100)
	require.NoError(t, err)
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Frame.ID)
	}
	return out
}

// Runs that end by abort or lease expiry leave their woken/delivered signals pending for
// recovery (not persisted ones, not other runs'); a finished run leaves nothing; logging
// a redelivery with Recovered closes it.
func TestRecoveriesOfUnfinishedRuns(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, 5*time.Minute))
		require.NoError(t, err)
		logSignal(t, s, "s-wake", "run-1", agent.BehaviorWake, t0)
		logSignal(t, s, "s-persist", "run-1", agent.BehaviorPersist, t0)
		logSignal(t, s, "s-deliver", "run-1", agent.BehaviorDeliver, t0)
		_, closed, _, err := runs.CloseRun(ctx, thread, "run-1", agent.RunFinished, "", t0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, closed)
		require.Equal(t, []string{}, pendingIDs(t, s), "a finished run acknowledges its signals")

		_, _, err = runs.OpenRun(ctx, newRun("run-2", t0.Add(2*time.Minute), 5*time.Minute))
		require.NoError(t, err)
		logSignal(t, s, "s-a", "run-2", agent.BehaviorDeliver, t0.Add(2*time.Minute))
		logSignal(t, s, "s-b", "run-2", agent.BehaviorPersist, t0.Add(2*time.Minute))
		logSignal(t, s, "s-c", "run-2", agent.BehaviorDeliver, t0.Add(2*time.Minute))
		_, _, _, err = runs.CloseRun(ctx, thread, "run-2", agent.RunAborted, "", t0.Add(3*time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{"s-a", "s-c"}, pendingIDs(t, s))

		_, _, err = runs.OpenRun(ctx, newRun("run-3", t0.Add(4*time.Minute), time.Minute))
		require.NoError(t, err)
		logSignal(t, s, "s-d", "run-3", agent.BehaviorWake, t0.Add(4*time.Minute))
		_, idle, err := runs.ExpireRuns(ctx, t0.Add(6*time.Minute))
		require.NoError(t, err)
		require.Len(t, idle, 1)
		require.Equal(t, []string{"s-a", "s-c", "s-d"}, pendingIDs(t, s), "in log order")

		require.NoError(t, store.NewQueue(s).CompleteThread(ctx, "", delivery.Outcome{Thread: thread, Now: t0.Add(7 * time.Minute),
			Recovered: []string{"s-a", "s-d"}}))
		require.Equal(t, []string{"s-c"}, pendingIDs(t, s))
	})
}

func TestLiveRunThreads(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, 5*time.Minute))
		require.NoError(t, err)
		other := newRun("run-2", t0, time.Minute)
		other.Thread.Thread = "other"
		_, _, err = runs.OpenRun(ctx, other)
		require.NoError(t, err)
		ks, err := runs.LiveRunThreads(ctx, thread.Agent, t0.Add(2*time.Minute))
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{thread}, ks, "a lapsed lease is not live")
		ks, err = runs.LiveRunThreads(ctx, "nobody", t0)
		require.NoError(t, err)
		require.Empty(t, ks)
	})
}

// Opening a run on a thread whose previous run lapsed, before any expiry pass, expires
// that run in the same transaction: its expired frame comes before the new run's open
// frame and its in-flight signals wait for recovery into the new run.
func TestOpenRunExpiresLapsedRun(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, 3*time.Second))
		require.NoError(t, err)
		logSignal(t, s, "s-a", "run-1", agent.BehaviorDeliver, t0.Add(time.Second))

		r2, created, err := runs.OpenRun(ctx, newRun("run-2", t0.Add(5*time.Second), time.Minute))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "run-2", r2.ID)
		r1, err := runs.GetRun(ctx, thread, "run-1")
		require.NoError(t, err)
		require.Equal(t, agent.RunExpired, r1.Status)
		require.Equal(t, t0.Add(3*time.Second), *r1.ClosedAt, "closed when the lease lapsed")
		require.Equal(t, []string{"s-a"}, pendingIDs(t, s))

		frames, err := store.NewFrames(s).FramesAfter(ctx, thread, 0, 100)
		require.NoError(t, err)
		var got []string
		for _, f := range frames {
			if f.Event == agent.EventRun {
				got = append(got, f.RunID+":"+f.RunStatus)
			}
		}
		require.Equal(t, []string{"run-1:open", "run-1:expired", "run-2:open"}, got)

		// Nothing is left for an expiry pass.
		changed, _, err := runs.ExpireRuns(ctx, t0.Add(6*time.Second))
		require.NoError(t, err)
		require.Empty(t, changed)
	})
}

// A signal a runtime that keeps what it accepted took (a delivered attempt by a target
// of a kind whose rule is RuntimeKeepsAccepted) is never recovered, whatever ended its
// run: the runtime holds it, and sending it again would show it twice. A signal another
// kind took, or one the keeping runtime's attempt failed for and another delivered, is.
// Each recovery carries why its run ended. The rule is data: with no kind keeping, every
// in-flight signal is recovered.
func TestRecoveriesLeaveOutWhatTheRuntimeKept(t *testing.T) {
	ctx := context.Background()
	const keeps, redelivers = "runtime", "webhook"
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := storetest.Open(t, b, store.WithRecoveryRules(map[string]delivery.RecoveryRule{
				keeps: delivery.RuntimeKeepsAccepted, redelivers: delivery.RedeliverInFlight}))
			queue := store.NewQueue(s)
			runs := store.NewRuns(s)
			logVia := func(id, runID, target, outcome string, at time.Time) {
				t.Helper()
				d := agent.Handoff{Thread: thread, Behavior: agent.BehaviorDeliver, RunID: runID,
					Signal: agent.Signal{ID: id, Type: agent.TypeReactive, TagName: "note", Contents: id}}
				require.NoError(t, queue.CompleteThread(ctx, "", delivery.Outcome{Thread: thread, Now: at,
					Frames:   []agent.Frame{agent.SignalFrame(d, at)},
					Attempts: []delivery.Attempt{{Thread: thread, Target: target, SignalID: id, Attempt: 1, Outcome: outcome, At: at}}}))
			}
			_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, 5*time.Minute))
			require.NoError(t, err)
			logVia("s-kept", "run-1", keeps, delivery.OutcomeDelivered, t0)
			logVia("s-webhook", "run-1", redelivers, delivery.OutcomeDelivered, t0)
			logVia("s-failed", "run-1", keeps, delivery.OutcomeFailed, t0)
			_, _, _, err = runs.CloseRun(ctx, thread, "run-1", agent.RunAborted, agent.CauseCrashed, t0.Add(time.Minute))
			require.NoError(t, err)
			require.Equal(t, []string{"s-webhook", "s-failed"}, pendingIDs(t, s))

			_, _, err = runs.OpenRun(ctx, newRun("run-2", t0.Add(2*time.Minute), time.Minute))
			require.NoError(t, err)
			logVia("s-lapsed", "run-2", redelivers, delivery.OutcomeDelivered, t0.Add(2*time.Minute))
			logVia("s-lapsed-kept", "run-2", keeps, delivery.OutcomeDelivered, t0.Add(2*time.Minute))
			_, _, err = runs.ExpireRuns(ctx, t0.Add(4*time.Minute))
			require.NoError(t, err)
			_, _, err = runs.OpenRun(ctx, newRun("run-3", t0.Add(5*time.Minute), time.Minute))
			require.NoError(t, err)
			logVia("s-aborted", "run-3", redelivers, delivery.OutcomeDelivered, t0.Add(5*time.Minute))
			_, _, _, err = runs.CloseRun(ctx, thread, "run-3", agent.RunAborted, "", t0.Add(6*time.Minute))
			require.NoError(t, err)

			recs, err := queue.PendingRecoveries(ctx, thread, 100)
			require.NoError(t, err)
			causes := map[string]string{}
			for _, r := range recs {
				causes[r.Frame.ID] = r.Cause
			}
			require.Equal(t, map[string]string{"s-webhook": agent.CauseCrashed, "s-failed": agent.CauseCrashed,
				"s-lapsed": agent.CauseLeaseExpired, "s-aborted": agent.CauseAborted}, causes)

		})
	}
}

// Without a rule that keeps them, what any runtime accepted is recovered like the rest.
func TestRecoveriesWithoutRulesRecoverAll(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		runs := store.NewRuns(s)
		_, _, err := runs.OpenRun(ctx, newRun("run-1", t0, 5*time.Minute))
		require.NoError(t, err)
		d := agent.Handoff{Thread: thread, Behavior: agent.BehaviorDeliver, RunID: "run-1",
			Signal: agent.Signal{ID: "s-accepted", Type: agent.TypeReactive, TagName: "note", Contents: "x"}}
		require.NoError(t, store.NewQueue(s).CompleteThread(ctx, "", delivery.Outcome{Thread: thread, Now: t0,
			Frames:   []agent.Frame{agent.SignalFrame(d, t0)},
			Attempts: []delivery.Attempt{{Thread: thread, Target: "runtime", SignalID: d.Signal.ID, Attempt: 1, Outcome: delivery.OutcomeDelivered, At: t0}}}))
		_, _, _, err = runs.CloseRun(ctx, thread, "run-1", agent.RunAborted, "", t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{"s-accepted"}, pendingIDs(t, s))
	})
}
