package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// forEachStore runs fn against every configured backend with a bare store.
func forEachStore(t *testing.T, fn func(t *testing.T, s *store.DB)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, storetest.Open(t, b)) })
	}
}

func signalFrame(id string, k inbox.ThreadKey, at time.Time) agent.Frame {
	sig := agent.Signal{ID: id, Type: agent.TypeNotification, TagName: "notification", Contents: "hello <b>",
		Attributes: inbox.Attributes{{Key: "z", Value: "1"}, {Key: "a", Value: int64(2)}, {Key: "ok", Value: true}},
		Metadata:   map[string]any{"recordId": "r1"}, CreatedAt: at, AcceptedAt: at}
	return agent.SignalFrame(agent.Handoff{Thread: k, Signal: sig, Behavior: agent.BehaviorDeliver, RunID: "run1", RecordIDs: []string{"r1"}}, at)
}

func TestAppendFrame(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		framesStore := store.NewFrames(s)
		f1, appended, err := framesStore.AppendFrame(ctx, signalFrame("sig-1", thread, t0))
		require.NoError(t, err)
		require.True(t, appended)
		require.Equal(t, int64(1), f1.Seq)
		f2, appended, err := framesStore.AppendFrame(ctx, signalFrame("sig-2", thread, t0.Add(time.Second)))
		require.NoError(t, err)
		require.True(t, appended)
		require.Equal(t, int64(2), f2.Seq)

		// The same id again is a no-op returning the logged frame.
		again, appended, err := framesStore.AppendFrame(ctx, signalFrame("sig-1", thread, t0.Add(time.Hour)))
		require.NoError(t, err)
		require.False(t, appended)
		require.Equal(t, int64(1), again.Seq)

		// Seqs are per thread.
		other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
		o, _, err := framesStore.AppendFrame(ctx, signalFrame("sig-3", other, t0))
		require.NoError(t, err)
		require.Equal(t, int64(1), o.Seq)

		frames, err := framesStore.FramesAfter(ctx, thread, 0, 10)
		require.NoError(t, err)
		require.Len(t, frames, 2)
		got := frames[0]
		require.Equal(t, "sig-1", got.ID)
		require.Equal(t, agent.EventSignal, got.Event)
		require.Equal(t, "run1", got.RunID)
		require.Equal(t, agent.BehaviorDeliver, got.Behavior)
		require.Equal(t, []string{"r1"}, got.RecordIDs)
		require.Equal(t, inbox.Attributes{{Key: "z", Value: "1"}, {Key: "a", Value: int64(2)}, {Key: "ok", Value: true}}, got.Signal.Attributes)
		require.Equal(t, `<notification z="1" a="2" ok="true">hello &lt;b&gt;</notification>`, got.XML)
		require.Equal(t, t0, got.Signal.CreatedAt)
		require.Equal(t, t0, got.CreatedAt)

		after1, err := framesStore.FramesAfter(ctx, thread, 1, 10)
		require.NoError(t, err)
		require.Len(t, after1, 1)
		require.Equal(t, "sig-2", after1[0].ID)

		last, err := framesStore.LastSeq(ctx, thread)
		require.NoError(t, err)
		require.Equal(t, int64(2), last)
	})
}

func TestAppendFrameConcurrentSeqs(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		framesStore := store.NewFrames(s)
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every id twice: duplicates must neither fail nor take a seq.
				for range 2 {
					_, _, err := framesStore.AppendFrame(ctx, signalFrame(fmt.Sprintf("sig-%02d", i), thread, t0))
					require.NoError(t, err)
				}
			}()
		}
		wg.Wait()
		frames, err := framesStore.FramesAfter(ctx, thread, 0, 100)
		require.NoError(t, err)
		require.Len(t, frames, 40)
		ids := map[string]bool{}
		for i, f := range frames {
			require.Greater(t, f.Seq, int64(i), "seqs increase")
			ids[f.ID] = true
		}
		require.Len(t, ids, 40)
	})
}
