package agentapi_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
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

// gatedFrames blocks the first read after it is armed until released: a subscriber
// too slow to take what is published.
type gatedFrames struct {
	countingFrames
	armed    atomic.Bool
	entered  chan struct{}
	released chan struct{}
}

func (g *gatedFrames) FramesAfter(ctx context.Context, k inbox.ThreadKey, after int64, limit int) ([]agent.Frame, error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.released
	}
	return g.countingFrames.FramesAfter(ctx, k, after, limit)
}

func TestStreamSlowSubscriberOverflowsToTheLog(t *testing.T) {
	gate := &gatedFrames{entered: make(chan struct{}), released: make(chan struct{})}
	e := deliverytest.New(t, deliverytest.Config{Frames: func(r agent.FrameReader) agent.FrameReader {
		gate.FrameReader = r
		return gate
	}})
	k := coderThread
	sub := e.Subscribe(k, "", "")
	persist(t, e, k, "first")
	require.Equal(t, "1", sub.Next(wait).ID)
	before := gate.reads.Load()

	// Hold the stream in a read of the log while far more than its buffer is published.
	gate.armed.Store(true)
	e.Broker.Publish(k)
	<-gate.entered
	const n = 150
	halfway := make(chan struct{})
	done := make(chan []string)
	go func() {
		var ids []string
		for i := range n {
			if i == 100 {
				close(halfway)
			}
			ids = append(ids, persist(t, e, k, fmt.Sprint("burst", i)).ID)
		}
		done <- ids
	}()
	<-halfway
	close(gate.released) // catch up while the publisher goes on
	ids := <-done
	got := sub.Take(n)
	for i, ev := range got {
		require.Equal(t, fmt.Sprint(i+2), ev.ID, "in order, nothing missing")
		require.Equal(t, ids[i], ev.Str("id"))
	}
	last := persist(t, e, k, "last").ID
	ev := sub.Next(wait)
	require.Equal(t, last, ev.Str("id"), "no frame written twice")
	require.Greater(t, gate.reads.Load(), before+1, "the overflow was caught up from the log")
}
