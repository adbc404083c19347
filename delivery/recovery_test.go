package delivery_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

func sendSignal(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body map[string]any) {
	t.Helper()
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/signals"), e.Token(k), body, nil))
}

func finishAs(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, runID, status string) {
	t.Helper()
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+url.PathEscape(runID)+"/finish"), e.Token(k),
		map[string]any{"status": status}, nil))
}

// signalsOf is the thread's signal frames after seq.
func signalsOf(e *deliverytest.Env, k inbox.ThreadKey, after int64) []agent.Frame {
	var out []agent.Frame
	for _, f := range e.Log(k) {
		if f.Seq > after && f.Event == agent.EventSignal {
			out = append(out, f)
		}
	}
	return out
}

func lastSeq(e *deliverytest.Env, k inbox.ThreadKey) int64 {
	log := e.Log(k)
	return log[len(log)-1].Seq
}

// inFlight puts two signals into a fresh run (a notification delivered in full and one
// sent through the API) and one persisted beside it, and returns them.
func inFlight(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey) (agent.Run, []agent.Frame) {
	t.Helper()
	run := e.OpenRun(k)
	create(t, e, k, comment("CI failed", inbox.PriorityUrgent))
	e.Pass()
	sendSignal(t, e, k, map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "build", "contents": "step 3 of 5"}})
	sendSignal(t, e, k, map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "note", "contents": "kept"},
		"ifActive": map[string]any{"behavior": "persist"}})
	sigs := signalsOf(e, k, 0)
	require.Len(t, sigs, 3)
	require.Equal(t, []agent.Behavior{agent.BehaviorDeliver, agent.BehaviorDeliver, agent.BehaviorPersist},
		[]agent.Behavior{sigs[0].Behavior, sigs[1].Behavior, sigs[2].Behavior})
	return run, sigs[:2]
}

func requireRecovered(t *testing.T, got []agent.Frame, want []agent.Frame, runID, cause string) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, f := range got {
		w := want[i]
		require.NotEqual(t, w.ID, f.ID, "a recovered signal is a new signal")
		require.Equal(t, runID, f.RunID)
		require.Equal(t, agent.BehaviorDeliver, f.Behavior)
		require.Equal(t, w.Signal.Contents, f.Signal.Contents)
		v, ok := f.Signal.Attributes.Get(delivery.AttrRecovered)
		require.True(t, ok)
		require.Equal(t, "true", v)
		require.Contains(t, f.XML, `recovered="true"`)
		require.Equal(t, w.ID, f.Signal.Metadata["recoveredFrom"])
		require.Equal(t, w.RunID, f.Signal.Metadata["recoveredRun"])
		require.Equal(t, cause, f.Signal.Metadata[delivery.MetaRecoveredCause], "why the run ended")
		require.Equal(t, w.RecordIDs, f.RecordIDs)
	}
}

// TestRecoveryAfterLeaseExpiry: the agent crashed (no heartbeat); the signals it had in
// its run are delivered again, marked recovered, at the start of its next run, and a run
// that finishes normally acknowledges them.
func TestRecoveryAfterLeaseExpiry(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("crashy")
		_, want := inFlight(t, e, k)
		e.Clock.Advance(agent.DefaultRunLease)
		e.Pass()
		seq := lastSeq(e, k)
		require.Equal(t, agent.RunExpired, e.Log(k)[seq-1].RunStatus)
		require.Empty(t, signalsOf(e, k, 0)[3:], "recovery waits for the next run; it does not wake")

		next := e.OpenRun(k)
		got := signalsOf(e, k, seq)
		requireRecovered(t, got, want, next.ID, agent.CauseLeaseExpired)
		require.Equal(t, `<build recovered="true">step 3 of 5</build>`, got[1].XML)

		// Finished normally: nothing is in flight any more.
		e.FinishRun(k, next.ID)
		seq = lastSeq(e, k)
		e.OpenRun(k)
		require.Empty(t, signalsOf(e, k, seq))
	})
}

// TestRecoveryAfterAbort: an aborted run's in-flight signals are recovered into the next
// run, whether the agent opens it or a wake does (then before the waking signal); a
// recovered signal that is again left in flight is recovered again.
func TestRecoveryAfterAbort(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("aborted")
		run, want := inFlight(t, e, k)
		finishAs(t, e, k, run.ID, agent.RunAborted)
		seq := lastSeq(e, k)

		second := e.OpenRun(k)
		got := signalsOf(e, k, seq)
		requireRecovered(t, got, want, second.ID, agent.CauseAborted)

		finishAs(t, e, k, second.ID, agent.RunAborted)
		seq = lastSeq(e, k)
		create(t, e, k, comment("deploy failed", inbox.PriorityUrgent))
		e.Pass()
		again := signalsOf(e, k, seq)
		require.Len(t, again, 3)
		wake := again[2]
		require.Equal(t, agent.BehaviorWake, wake.Behavior, "the waking signal comes after the recovered ones")
		requireRecovered(t, again[:2], got, wake.RunID, agent.CauseAborted)
		require.Equal(t, want[0].Signal.Contents, again[0].Signal.Contents)
	})
}
