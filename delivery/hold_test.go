package delivery_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A runtime that takes a signal only once the thread is idle (it waits on a person, or
// refuses a second run) hands it back with agent.ErrHoldUntilIdle: the record waits for
// the idle transition without an attempt, a failure or a mark against the target, and
// then goes in full, waking the thread.
func TestHeldSignalGoesOutWhenIdle(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { heldSignalGoesOutWhenIdle(t, b) })
	}
}

func heldSignalGoesOutWhenIdle(t *testing.T, b storetest.Backend) {
	var busy atomic.Bool
	busy.Store(true)
	var held atomic.Int32
	env := deliverytest.New(t, deliverytest.Config{
		Backend: &b,
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			rt := delivery.TargetFunc(func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
				if busy.Load() {
					held.Add(1)
					return agent.Result{}, fmt.Errorf("thread waits on a question: %w", agent.ErrHoldUntilIdle)
				}
				return stream.Deliver(ctx, d)
			})
			return map[string]delivery.Route{"coder": {Kind: "runtime", Target: rt}, "support": {Kind: "stream", Target: stream}}
		},
	})
	ctx := context.Background()
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "held"}
	run := env.OpenRun(k)
	id := env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	env.Pass()

	require.EqualValues(t, 1, held.Load())
	r := env.Record(id)
	require.Equal(t, inbox.StatusPending, r.Status)
	require.True(t, r.FullWhenIdle, "it waits for the thread to be idle")
	require.Zero(t, r.Attempts)
	require.Empty(t, r.LastError)
	for _, f := range env.Log(k) {
		require.NotEqual(t, agent.EventSignal, f.Event, "nothing was logged as sent")
	}
	attempts, err := store.NewAdmin(env.Store).ListAttempts(ctx, delivery.AttemptFilter{Thread: &k})
	require.NoError(t, err)
	require.Empty(t, attempts)
	states, err := store.NewTargets(env.Store).TargetStates(ctx)
	require.NoError(t, err)
	for _, st := range states {
		require.Zero(t, st.Failures, "a hold is not the target failing")
	}

	env.Pass() // nothing is due while the thread runs
	require.EqualValues(t, 1, held.Load())

	busy.Store(false)
	env.FinishRun(k, run.ID)
	env.Pass()
	r = env.Record(id)
	require.Equal(t, inbox.StatusDelivered, r.Status)
	var sent []agent.Frame
	for _, f := range env.Log(k) {
		if f.Event == agent.EventSignal {
			sent = append(sent, f)
		}
	}
	require.Len(t, sent, 1)
	require.Equal(t, agent.BehaviorWake, sent[0].Behavior, "the held notification wakes the idle thread")
	require.Contains(t, sent[0].XML, "CI failed")
}
