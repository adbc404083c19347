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
)

// TestSignalIDsPerThread: a signal id is unique within its thread only. The same id on
// another agent's thread is a different signal and is logged there (it used to be
// dropped in silence); on the same thread it is logged once.
func TestSignalIDsPerThread(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		frames := store.NewFrames(s)
		other := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "acme/api#7"}
		a, appended, err := frames.AppendFrame(ctx, signalFrame("shared", thread, t0))
		require.NoError(t, err)
		require.True(t, appended)
		b := signalFrame("shared", other, t0)
		b.Signal.Contents = "for support"
		got, appended, err := frames.AppendFrame(ctx, b)
		require.NoError(t, err)
		require.True(t, appended, "another thread's id does not hide this one")
		require.Equal(t, other, got.Thread)

		fa, err := frames.GetFrame(ctx, thread, "shared")
		require.NoError(t, err)
		require.Equal(t, a.Seq, fa.Seq)
		require.Equal(t, "hello <b>", fa.Signal.Contents)
		fb, err := frames.GetFrame(ctx, other, "shared")
		require.NoError(t, err)
		require.Equal(t, "for support", fb.Signal.Contents)
		_, err = frames.GetFrame(ctx, inbox.ThreadKey{Agent: "x", Resource: "y", Thread: "z"}, "shared")
		require.ErrorIs(t, err, inbox.ErrNotFound)

		// The dispatcher's append path scopes the id the same way.
		third := inbox.ThreadKey{Agent: "ops", Resource: "r", Thread: "t"}
		require.NoError(t, store.NewQueue(s).CompleteThread(ctx, "", delivery.Outcome{Thread: third, Now: t0, Frames: []agent.Frame{signalFrame("shared", third, t0)}}))
		log, err := frames.FramesAfter(ctx, third, 0, 10)
		require.NoError(t, err)
		require.Len(t, log, 1)

		// Same thread, same id: logged once.
		_, appended, err = frames.AppendFrame(ctx, signalFrame("shared", thread, t0))
		require.NoError(t, err)
		require.False(t, appended)
	})
}

// TestRecoveriesPerThread: two threads' in-flight signals with one id are each recovered
// on their own thread (recoveries were keyed by the id alone).
func TestRecoveriesPerThread(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		queue := store.NewQueue(s)
		runs := store.NewRuns(s)
		other := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"}
		for _, k := range []inbox.ThreadKey{thread, other} {
			run := newRun("run-"+k.Agent, t0, time.Minute)
			run.Thread = k
			_, _, err := runs.OpenRun(ctx, run)
			require.NoError(t, err)
			d := agent.Handoff{Thread: k, Behavior: agent.BehaviorDeliver, RunID: run.ID,
				Signal: agent.Signal{ID: "s-same", Type: agent.TypeReactive, TagName: "note", Contents: k.Agent}}
			require.NoError(t, queue.CompleteThread(ctx, "", delivery.Outcome{Thread: k, Now: t0, Frames: []agent.Frame{agent.SignalFrame(d, t0)}}))
			_, _, _, err = runs.CloseRun(ctx, k, run.ID, agent.RunAborted, "", t0.Add(time.Second))
			require.NoError(t, err)
		}
		for _, k := range []inbox.ThreadKey{thread, other} {
			frames, err := queue.PendingRecoveries(ctx, k, 10)
			require.NoError(t, err)
			require.Len(t, frames, 1, "%s", k)
			require.Equal(t, k.Agent, frames[0].Frame.Signal.Contents)
		}
		// Closing one thread's recovery leaves the other's.
		require.NoError(t, queue.CompleteThread(ctx, "", delivery.Outcome{Thread: thread, Now: t0.Add(time.Minute), Recovered: []string{"s-same"}}))
		frames, err := queue.PendingRecoveries(ctx, other, 10)
		require.NoError(t, err)
		require.Len(t, frames, 1)
		frames, err = queue.PendingRecoveries(ctx, thread, 10)
		require.NoError(t, err)
		require.Empty(t, frames)
	})
}
