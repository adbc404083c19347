package agentapi_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// countingFrames counts the stream's reads of the log.
type countingFrames struct {
	agent.FrameReader
	reads atomic.Int64
}

func (c *countingFrames) FramesAfter(ctx context.Context, k inbox.ThreadKey, after int64, limit int) ([]agent.Frame, error) {
	c.reads.Add(1)
	return c.FrameReader.FramesAfter(ctx, k, after, limit)
}

func TestStreamLiveFramesFromMemory(t *testing.T) {
	counter := &countingFrames{}
	e := deliverytest.New(t, deliverytest.Config{Frames: func(r agent.FrameReader) agent.FrameReader {
		counter.FrameReader = r
		return counter
	}})
	k := coderThread
	first := persist(t, e, k, "before").ID
	sub := e.Subscribe(k, "", "")
	require.Equal(t, first, sub.Next(wait).Str("id"), "the catch-up read replays the log")
	before := counter.reads.Load()

	const n = 20
	var ids []string
	for i := range n {
		ids = append(ids, persist(t, e, k, fmt.Sprint("live", i)).ID)
	}
	got := sub.Take(n)
	for i, ev := range got {
		require.Equal(t, fmt.Sprint(i+2), ev.ID)
		require.Equal(t, ids[i], ev.Str("id"))
	}
	require.Equal(t, before, counter.reads.Load(), "a live subscriber takes committed frames from memory, not the log")

	// What memory handed over is what the log holds: a reconnect replays the same frames.
	resumed := e.Subscribe(k, "1", "")
	replayed := resumed.Take(n)
	for i := range got {
		require.Equal(t, got[i].ID, replayed[i].ID)
		require.Equal(t, got[i].Data, replayed[i].Data, "frame %d: memory and log give the same JSON", i)
	}
}
