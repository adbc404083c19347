package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// The conversation watches replies made before watches existed (reply_watches) become
// watches of the same conversations, found by the keys events are looked up with, and
// expiring a week after they were made.
func TestReplyWatchesBecomeWatches(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, b.Config, storetest.Logger(t))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.NoError(t, s.MigrateOnly(ctx, func(v int64) bool { return v <= 26 }))
			const made = int64(1_700_000_000_000_000) // µs
			places := map[string]reply.To{
				"r-slack":  reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C1", ThreadTS: "1.000100"}),
				"r-dm":     reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D9"}),
				"r-github": reply.NewTo("github", "gh", github.Place{Repo: "Acme/API", Number: 7, ReviewCommentID: 5}),
				"r-email":  reply.NewTo("email", "support", email.Place{Mailbox: "INBOX", MessageID: "<re@y>", References: []string{"<root@x>", "<re1@y>"}}),
			}
			k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
			w := s.Writer()
			for id, to := range places {
				raw, err := json.Marshal(to)
				require.NoError(t, err)
				_, err = w.ExecContext(ctx, w.Rebind(`INSERT INTO replies (id, agent, resource_id, thread_id, text, reply_to, source, connector, watch,
					status, queued_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'hi', ?, ?, ?, 1, 'sent', ?, ?, ?)`),
					id, k.Agent, k.Resource, k.Thread, string(raw), to.Source, to.Connector, made, made, made)
				require.NoError(t, err)
				_, err = w.ExecContext(ctx, w.Rebind(`INSERT INTO reply_watches (place_key, agent, resource_id, thread_id, source, connector, reply_id, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), "digest-"+id, k.Agent, k.Resource, k.Thread, to.Source, to.Connector, id, made)
				require.NoError(t, err)
			}
			_, err = s.Migrate(ctx)
			require.NoError(t, err)

			for id, to := range places {
				resource, ok := kindstest.Places().WatchResource(to)
				require.True(t, ok)
				live, err := store.NewWatches(s).LiveWatches(ctx, []string{watch.Key(to.Source, to.Connector, resource)})
				require.NoError(t, err)
				require.Len(t, live, 1, "%s: %s", id, resource)
				got := live[0]
				require.Equal(t, k, got.Thread)
				require.Equal(t, id, got.ReplyID)
				require.Equal(t, resource, got.Resource)
				require.Equal(t, watch.DefaultTTL, got.ExpiresAt.Sub(got.CreatedAt))
				require.Empty(t, got.Kinds)
				require.False(t, got.Forever)
			}
			var n int
			require.Error(t, s.Reader().GetContext(ctx, &n, `SELECT count(*) FROM reply_watches`), "the old table is gone")
		})
	}
}
