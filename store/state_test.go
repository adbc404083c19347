package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/store"
)

func TestStateLanes(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		states := store.NewStates(s)
		next, prev, skipped, err := states.AdvanceStateLane(ctx, thread, "ci", "sha1", "", t0)
		require.NoError(t, err)
		require.False(t, skipped)
		require.Nil(t, prev)
		require.Equal(t, agent.StateLane{Version: 1, CacheKey: "sha1", Mode: agent.StateSnapshot}, next)

		next, prev, skipped, err = states.AdvanceStateLane(ctx, thread, "ci", "sha1", agent.StateSnapshot, t0)
		require.NoError(t, err)
		require.True(t, skipped, "same cacheKey and mode")
		require.Equal(t, 1, next.Version)
		require.Equal(t, 1, prev.Version)

		next, _, skipped, err = states.AdvanceStateLane(ctx, thread, "ci", "sha1", agent.StateDelta, t0)
		require.NoError(t, err)
		require.False(t, skipped, "a new mode bumps")
		require.Equal(t, 2, next.Version)

		// Lanes are per state id.
		next, _, _, err = states.AdvanceStateLane(ctx, thread, "deploy", "sha1", "", t0)
		require.NoError(t, err)
		require.Equal(t, 1, next.Version)

		// Restore undoes an advance whose signal did not go out.
		next, prev, _, err = states.AdvanceStateLane(ctx, thread, "ci", "sha2", agent.StateDelta, t0)
		require.NoError(t, err)
		require.Equal(t, 3, next.Version)
		require.NoError(t, states.RestoreStateLane(ctx, thread, "ci", prev, next.Version))
		_, _, skipped, err = states.AdvanceStateLane(ctx, thread, "ci", "sha1", agent.StateDelta, t0)
		require.NoError(t, err)
		require.True(t, skipped)
		next, prev, _, err = states.AdvanceStateLane(ctx, thread, "new", "k", "", t0)
		require.NoError(t, err)
		require.NoError(t, states.RestoreStateLane(ctx, thread, "new", prev, next.Version))
		next, _, _, err = states.AdvanceStateLane(ctx, thread, "new", "k", "", t0)
		require.NoError(t, err)
		require.Equal(t, 1, next.Version, "a restored new lane starts over")
	})
}

func TestStateLaneConcurrent(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		sent := 0
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, skipped, err := store.NewStates(s).AdvanceStateLane(ctx, thread, "ci", "same", "", t0)
				require.NoError(t, err)
				if !skipped {
					mu.Lock()
					sent++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 1, sent, "exactly one of identical concurrent state signals goes out")
	})
}
