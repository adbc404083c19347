package delivery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// shortLease is the coder agent with a run lease of d.
func shortLease(d time.Duration) []agent.Config {
	return []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, RunLease: d}}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runStatus is the last run frame of runID in k's log ("" when none).
func runStatus(e *deliverytest.Env, k inbox.ThreadKey, runID string) string {
	status := ""
	for _, f := range e.Log(k) {
		if f.Event == agent.EventRun && f.RunID == runID {
			status = f.RunStatus
		}
	}
	return status
}

// TestLoopExpiresLapsedRunAtOnce runs the real loop with a poll interval far beyond the
// test: a run that lapses is expired by the loop when its lease ends, not on a tick, even
// when nothing else happened since the run opened; and what waited for the thread to
// turn idle goes out at once, after the lapsed run's in-flight signals.
func TestLoopExpiresLapsedRunAtOnce(t *testing.T) {
	const lease = time.Second
	cfg := deliverytest.Config{Agents: shortLease(lease), Dispatch: []delivery.Option{
		delivery.WithPollInterval(time.Hour),
	}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		e.Dispatcher.TestSignals.Pass.Init()
		passes := e.Dispatcher.TestSignals.Pass.C()
		require.NoError(t, e.Dispatcher.Start(t.Context()))
		<-passes // the first pass at start: the loop now sleeps for the poll interval
		k := key("lapse")

		// Only an agent opening a run and sending a signal: nothing wakes the loop but the
		// run itself.
		r1 := e.OpenRun(k)
		sendSignal(t, e, k, map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "build", "contents": "step 3"}})
		e.Clock.Advance(lease)
		eventually(t, 5*time.Second, func() bool { return runStatus(e, k, r1.ID) == agent.RunExpired },
			"the lapsed run was not expired before the poll interval")

		// The agent comes back; a high notification arrives while it works, then it
		// crashes again.
		r2 := e.OpenRun(k)
		rec := create(t, e, k, comment("Review requested", inbox.PriorityHigh))
		eventually(t, 5*time.Second, func() bool {
			for _, f := range signalsOf(e, k, 0) {
				if f.RunID == r2.ID && f.Signal.TagName == agent.TagNotificationSummary {
					return true
				}
			}
			return false
		}, "no summary into the active run")
		require.True(t, e.Record(rec.RecordID).FullWhenIdle)
		seq := lastSeq(e, k)
		e.Clock.Advance(lease)
		eventually(t, 5*time.Second, func() bool { return e.Record(rec.RecordID).Status == inbox.StatusDelivered },
			"the full-when-idle record was not delivered when the run lapsed")
		require.Equal(t, agent.RunExpired, runStatus(e, k, r2.ID))

		got := signalsOf(e, k, seq)
		require.Len(t, got, 3, "the recovered signal and summary, then the full notification")
		full := got[2]
		require.Equal(t, fullXML(rec.RecordID, inbox.PriorityHigh, "Review requested"), full.XML)
		require.Equal(t, agent.BehaviorWake, full.Behavior, "it wakes the thread, after the recovered signals")
		require.NotEqual(t, r2.ID, full.RunID)
		for _, f := range got[:2] {
			require.Equal(t, full.RunID, f.RunID)
			require.Contains(t, f.XML, `recovered="true"`)
		}
	})
}

// TestOpenAfterLapseRecovers: an agent opening a new run after its previous one lapsed,
// before any expiry pass, gets the lapsed run's in-flight signals at the start of the new
// run, and the lapsed run is closed as expired.
func TestOpenAfterLapseRecovers(t *testing.T) {
	forBackends(t, deliverytest.Config{Agents: shortLease(3 * time.Second)}, func(t *testing.T, e *deliverytest.Env) {
		k := key("reopen")
		r1 := e.OpenRun(k)
		sendSignal(t, e, k, map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "build", "contents": "step 3"}})
		want := signalsOf(e, k, 0)
		require.Len(t, want, 1)
		seq := lastSeq(e, k)

		e.Clock.Advance(5 * time.Second)
		r2 := e.OpenRun(k)
		require.NotEqual(t, r1.ID, r2.ID)
		log := e.Log(k)
		var after []agent.Frame
		for _, f := range log {
			if f.Seq > seq {
				after = append(after, f)
			}
		}
		require.Len(t, after, 3)
		require.Equal(t, []string{r1.ID + ":" + agent.RunExpired, r2.ID + ":" + agent.RunOpen},
			[]string{after[0].RunID + ":" + after[0].RunStatus, after[1].RunID + ":" + after[1].RunStatus})
		requireRecovered(t, after[2:], want, r2.ID, agent.CauseLeaseExpired)
		require.Equal(t, `<build recovered="true">step 3</build>`, after[2].XML)

		run, err := store.NewRuns(e.Store).GetRun(t.Context(), k, r1.ID)
		require.NoError(t, err)
		require.Equal(t, agent.RunExpired, run.Status)
	})
}
