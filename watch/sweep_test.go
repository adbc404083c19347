package watch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/watch"
)

// hangGuard only bounds a test that would otherwise hang; no assertion depends on it.
const hangGuard = 10 * time.Second

func nextPass(t *testing.T, s *watch.Sweep) watch.SweepPass {
	t.Helper()
	select {
	case p := <-s.TestSignals.Pass.C():
		return p
	case <-time.After(hangGuard):
		t.Fatal("no sweep pass")
	}
	return watch.SweepPass{}
}

// TestSweepEndsExpiredWatches: each pass (driven by the test, no sleeping) ends the
// watches due at its time, in batches, and tells each thread once.
func TestSweepEndsExpiredWatches(t *testing.T) {
	f := newFixture(t, watch.Config{})
	ctx := t.Context()
	var ids []string
	for i := range 5 {
		w, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: fmt.Sprint("short-", i), TTL: "1h"})
		require.NoError(t, err)
		ids = append(ids, w.ID)
	}
	long, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "long", TTL: "2h"})
	require.NoError(t, err)
	deleted, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "deleted", TTL: "1h"})
	require.NoError(t, err)
	_, err = f.svc.Delete(ctx, coder, deleted.ID)
	require.NoError(t, err)

	tick := make(chan struct{})
	var (
		mu     sync.Mutex // the sweep's goroutine appends while the test reads
		waited []time.Duration
	)
	sw := watch.NewSweep(f.mem, f.svc, watch.Config{SweepInterval: time.Minute}, service.Base{Now: f.clock},
		watch.WithSweepBatch(2),
		watch.WithSweepWait(func(ctx context.Context, d time.Duration) bool {
			mu.Lock()
			waited = append(waited, d)
			mu.Unlock()
			select {
			case <-ctx.Done():
				return false
			case <-tick:
				return true
			}
		}))
	sw.TestSignals.Pass.Init()
	require.NoError(t, sw.Start(ctx))
	t.Cleanup(func() { require.NoError(t, sw.Stop(context.Background())) })

	require.Equal(t, watch.SweepPass{}, nextPass(t, sw), "nothing is due at first")

	f.advance(time.Hour)
	tick <- struct{}{}
	require.Equal(t, watch.SweepPass{Ended: 5}, nextPass(t, sw), "every due watch, over three batches of 2")
	notes := f.in.notes()
	require.Len(t, notes, 5, "one notification per watch; none for the deleted one")
	for i, n := range notes {
		require.Equal(t, watch.Kind, n.Kind)
		require.Equal(t, watch.EndExpired, n.EndsWatch.Reason)
		require.Contains(t, ids, n.EndsWatch.ID, i)
	}
	for _, id := range ids {
		w, err := f.svc.Get(ctx, coder, id)
		require.NoError(t, err)
		require.Equal(t, watch.EndExpired, w.EndReason)
	}
	w, err := f.svc.Get(ctx, coder, long.ID)
	require.NoError(t, err)
	require.Nil(t, w.EndedAt, "not due yet")

	tick <- struct{}{}
	require.Equal(t, watch.SweepPass{}, nextPass(t, sw), "a second pass at the same time finds nothing more")
	f.advance(time.Hour)
	tick <- struct{}{}
	require.Equal(t, watch.SweepPass{Ended: 1}, nextPass(t, sw))
	require.Len(t, f.in.notes(), 6)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []time.Duration{time.Minute, time.Minute, time.Minute}, waited[:3], "sweep_interval between passes")
}

// TestSweepAfterACrash: a sweep that died after announcing some ends (the process
// killed between the store's commit and its next step) is followed by another that
// ends the rest; nothing is announced twice.
func TestSweepAfterACrash(t *testing.T) {
	f := newFixture(t, watch.Config{})
	ctx := t.Context()
	for i := range 4 {
		_, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: fmt.Sprint("w", i), TTL: "1h"})
		require.NoError(t, err)
	}
	f.advance(time.Hour)
	due, err := f.mem.DueWatches(ctx, f.clock(), 10)
	require.NoError(t, err)
	require.Len(t, due, 4)
	// The crashed sweep announced the first two; the first one's watch row was not
	// ended by it (an ingest that committed, then a crash before anything else).
	_, _, err = f.svc.End(ctx, due[1].ID, watch.EndExpired)
	require.NoError(t, err)
	_, err = f.in.Ingest(ctx, endedEvent(due[0].ID), nil)
	require.NoError(t, err)

	sw := watch.NewSweep(f.mem, f.svc, watch.Config{}, service.Base{Now: f.clock})
	n, err := sw.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the rest, and the one whose announcement was a duplicate")
	require.Len(t, f.in.notes(), 3, "each announced at most once")
	left, err := f.mem.DueWatches(ctx, f.clock(), 10)
	require.NoError(t, err)
	require.Empty(t, left, "no watch stays due")
}

// TestSweepFailureIsRetried: an end that fails is left for the next pass, which ends it;
// the failing pass does not spin on it.
func TestSweepFailureIsRetried(t *testing.T) {
	f := newFixture(t, watch.Config{})
	ctx := t.Context()
	_, _, err := f.svc.Create(ctx, coder, watch.Request{Source: "generic", Resource: "a", TTL: "1h"})
	require.NoError(t, err)
	f.advance(time.Hour)
	f.in.fail = errors.New("database is locked")
	sw := watch.NewSweep(f.mem, f.svc, watch.Config{}, service.Base{Now: f.clock}, watch.WithSweepBatch(1))
	n, err := sw.RunOnce(ctx)
	require.ErrorContains(t, err, "database is locked")
	require.Zero(t, n)
	f.in.fail = nil
	n, err = sw.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func endedEvent(id string) *inbox.Event {
	return &inbox.Event{Source: watch.EndedSource, Connector: watch.EndedConnector, Type: watch.Kind, DeliveryID: watch.EndedDeliveryID(id)}
}
