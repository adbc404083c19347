package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func TestTargetSessions(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		ss := store.NewSessions(s)
		_, ok, err := ss.TargetSession(ctx, thread)
		require.NoError(t, err)
		require.False(t, ok)

		first := store.TargetSession{Thread: thread, Kind: "openai-agents", ID: "sess_1", CreatedAt: t0}
		kept, saved, err := ss.SaveTargetSession(ctx, first)
		require.NoError(t, err)
		require.True(t, saved)
		require.Equal(t, first, kept)

		// A second creation (another replica) keeps the first session.
		kept, saved, err = ss.SaveTargetSession(ctx, store.TargetSession{Thread: thread, Kind: "openai-agents", ID: "sess_2", CreatedAt: t0})
		require.NoError(t, err)
		require.False(t, saved)
		require.Equal(t, "sess_1", kept.ID)

		got, ok, err := ss.SessionThread(ctx, thread.Agent, "sess_1")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, thread, got.Thread)
		_, ok, err = ss.SessionThread(ctx, "other", "sess_1")
		require.NoError(t, err)
		require.False(t, ok, "a session leads back only to its own agent's thread")

		// Forgetting names the session: a newer one stays.
		require.NoError(t, ss.ForgetTargetSession(ctx, thread, "sess_2"))
		_, ok, err = ss.TargetSession(ctx, thread)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, ss.ForgetTargetSession(ctx, thread, "sess_1"))
		_, ok, err = ss.TargetSession(ctx, thread)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestTargetSessionsRace(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		ss := store.NewSessions(s)
		k := inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "t"}
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kept, _, err := ss.SaveTargetSession(ctx, store.TargetSession{Thread: k, Kind: "claude-agents", ID: "s" + string(rune('a'+i)), CreatedAt: t0})
				require.NoError(t, err)
				ids[i] = kept.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			require.Equal(t, ids[0], id, "every saver sees the one session kept")
		}
	})
}
