package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
)

// Watches are looked up by place key, recorded once per thread and place, and bounded
// per thread: past reply.MaxWatchesPerThread a thread watches nothing more.
func TestConversationWatches(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		key, ok := slackTo.WatchKey()
		require.True(t, ok)
		for range 2 {
			added, err := s.WatchConversation(ctx, thread, slackTo, "r1", t0)
			require.NoError(t, err)
			require.True(t, added)
		}
		other := inbox.ThreadKey{Agent: thread.Agent, Resource: thread.Resource, Thread: "other"}
		_, err := s.WatchConversation(ctx, other, slackTo, "r2", t0)
		require.NoError(t, err)
		got, err := s.Watchers(ctx, []string{key, "unknown"})
		require.NoError(t, err)
		require.Equal(t, map[string][]inbox.ThreadKey{key: {thread, other}}, got, "one row per thread, none for an unknown key")

		_, err = s.WatchConversation(ctx, thread, reply.To{Source: reply.SourceSlack, Connector: "acme"}, "r3", t0)
		require.Error(t, err, "a place without a conversation")

		for i := 1; i < reply.MaxWatchesPerThread; i++ {
			to := slackTo
			to.ThreadTS = fmt.Sprintf("%d.000100", i+1)
			added, err := s.WatchConversation(ctx, thread, to, fmt.Sprintf("c%d", i), t0)
			require.NoError(t, err)
			require.True(t, added, "watch %d", i)
		}
		over := slackTo
		over.ThreadTS = "9999.000100"
		added, err := s.WatchConversation(ctx, thread, over, "over", t0)
		require.NoError(t, err)
		require.False(t, added, "the thread's cap")
		overKey, _ := over.WatchKey()
		got, err = s.Watchers(ctx, []string{overKey})
		require.NoError(t, err)
		require.Empty(t, got)
	})
}
