package delivery_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// committedQueue runs committed once the store's commit has returned, before the
// dispatcher learns of it.
type committedQueue struct {
	delivery.Queue
	st        *store.DB
	committed func([]agent.Frame)
}

func (q *committedQueue) CompleteThreadFrames(ctx context.Context, owner string, o delivery.Outcome) ([]agent.Frame, error) {
	fs, err := store.NewQueue(q.st).CompleteThreadFrames(ctx, owner, o)
	q.committed(fs)
	return fs, err
}

// TestFramesInMemoryOnlyAfterCommit: a live subscriber is handed a pass's frames in
// memory, and not one of them before the commit that logged them returned.
func TestFramesInMemoryOnlyAfterCommit(t *testing.T) {
	var frames <-chan *agent.Frame
	var atCommit []int // frames waiting for the subscriber when each commit returned
	var logged [][]agent.Frame
	e := deliverytest.New(t, deliverytest.Config{Queue: func(s *store.DB) delivery.Queue {
		return &committedQueue{Queue: store.NewQueue(s), st: s, committed: func(fs []agent.Frame) {
			atCommit = append(atCommit, len(frames))
			logged = append(logged, fs)
		}}
	}})
	k := key("t1")
	_, f, unsubscribe := e.Broker.SubscribeFrames(k)
	defer unsubscribe()
	frames = f
	e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "red", Priority: inbox.PriorityUrgent})
	e.Pass()
	require.NotEmpty(t, atCommit)
	for i, n := range atCommit {
		require.Zero(t, n, "commit %d: no frame handed over before its commit returned", i)
	}
	var got []agent.Frame
	for len(frames) > 0 {
		got = append(got, *<-frames)
	}
	var want []agent.Frame
	for _, fs := range logged {
		want = append(want, fs...)
	}
	require.NotEmpty(t, got, "the pass's frames were handed over in memory")
	require.Equal(t, want, got)
	log := e.Log(k) // the run frame before them was logged when the wake opened its run
	log = log[len(log)-len(got):]
	for i := range got {
		require.Equal(t, log[i].Seq, got[i].Seq)
		require.Equal(t, log[i].ID, got[i].ID)
		fromLog, err := json.Marshal(log[i])
		require.NoError(t, err)
		fromMemory, err := json.Marshal(got[i])
		require.NoError(t, err)
		require.Equal(t, string(fromLog), string(fromMemory), "frame %d is written as the log holds it", i)
	}
}
