package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
)

var slackTo = reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "C1", ThreadTS: "1.000100"})

func newReply(id string, at time.Time) reply.Reply {
	return reply.Reply{ID: id, Thread: thread, Text: "on it", To: slackTo, Status: reply.StatusQueued,
		NextAttemptAt: &at, QueuedAt: at, CreatedAt: at, UpdatedAt: at}
}

func TestReplyOutboxLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		replies := store.NewReplies(s)
		ctx := context.Background()
		r, created, err := replies.CreateReply(ctx, newReply("r1", t0))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, slackTo, r.To)
		require.Equal(t, thread, r.Thread)

		again, created, err := replies.CreateReply(ctx, reply.Reply{ID: "r1", Thread: thread, Text: "other", To: slackTo,
			Status: reply.StatusQueued, QueuedAt: t0, CreatedAt: t0, UpdatedAt: t0})
		require.NoError(t, err)
		require.False(t, created, "one reply per id")
		require.Equal(t, "on it", again.Text)

		_, err = replies.GetReply(ctx, "missing")
		require.ErrorIs(t, err, inbox.ErrNotFound)

		next, err := replies.NextReplyDue(ctx)
		require.NoError(t, err)
		require.Equal(t, t0, *next)

		got, err := replies.ClaimReplies(ctx, "a", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		again2, err := replies.ClaimReplies(ctx, "b", t0.Add(time.Second), t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, again2, "leased to a")

		ok, err := replies.BeginReplyAttempt(ctx, "r1", "b", t0)
		require.NoError(t, err)
		require.False(t, ok, "only the lease's owner counts an attempt")
		ok, err = replies.BeginReplyAttempt(ctx, "r1", "a", t0)
		require.NoError(t, err)
		require.True(t, ok)

		retryAt := t0.Add(10 * time.Second)
		require.NoError(t, replies.FinishReply(ctx, "r1", "a", reply.Outcome{Status: reply.StatusQueued, NextAttemptAt: retryAt, Error: "rate limited", Now: t0}))
		got, err = replies.ClaimReplies(ctx, "b", t0.Add(time.Second), t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, got, "not due before its retry time")
		got, err = replies.ClaimReplies(ctx, "b", retryAt, retryAt.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, 1, got[0].Attempts, "the attempt was counted before the send")
		require.Equal(t, "rate limited", got[0].LastError)

		require.NoError(t, replies.FinishReply(ctx, "r1", "a", reply.Outcome{Status: reply.StatusFailed, Error: "stale owner", Now: retryAt}))
		r, err = replies.GetReply(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusQueued, r.Status, "a lapsed owner does not fail it")

		require.NoError(t, replies.FinishReply(ctx, "r1", "b", reply.Outcome{Status: reply.StatusSent,
			Sent: reply.Sent{PlatformID: "C1/2.000200", URL: "https://x/y"}, Now: retryAt}))
		r, err = replies.GetReply(ctx, "r1")
		require.NoError(t, err)
		require.Equal(t, reply.StatusSent, r.Status)
		require.Equal(t, "C1/2.000200", r.PlatformID)
		require.Equal(t, retryAt, *r.SentAt)
		require.Nil(t, r.NextAttemptAt)

		own, err := replies.OwnReply(ctx, "slack", "acme", "C1/2.000200")
		require.NoError(t, err)
		require.True(t, own)
		own, err = replies.OwnReply(ctx, "slack", "other", "C1/2.000200")
		require.NoError(t, err)
		require.False(t, own, "another connector's post")
		own, err = replies.OwnReply(ctx, "slack", "acme", "")
		require.NoError(t, err)
		require.False(t, own)

		next, err = replies.NextReplyDue(ctx)
		require.NoError(t, err)
		require.Nil(t, next)
	})
}

func TestReplyRequeueAndDecline(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		replies := store.NewReplies(s)
		ctx := context.Background()
		_, _, err := replies.CreateReply(ctx, newReply("f1", t0))
		require.NoError(t, err)
		_, err = replies.ClaimReplies(ctx, "a", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.NoError(t, replies.FinishReply(ctx, "f1", "a", reply.Outcome{Status: reply.StatusFailed, Error: "channel_not_found", Now: t0}))

		r, ok, err := replies.RequeueReply(ctx, "f1", reply.StatusPending, t0)
		require.NoError(t, err)
		require.False(t, ok, "not pending")
		require.Equal(t, reply.StatusFailed, r.Status)
		later := t0.Add(48 * time.Hour)
		r, ok, err = replies.RequeueReply(ctx, "f1", reply.StatusFailed, later)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, reply.StatusQueued, r.Status)
		require.Equal(t, later, r.QueuedAt, "max_age counts afresh")
		_, _, err = replies.RequeueReply(ctx, "missing", reply.StatusFailed, later)
		require.ErrorIs(t, err, inbox.ErrNotFound)

		p := newReply("p1", t0)
		p.Status, p.NextAttemptAt = reply.StatusPending, nil
		_, _, err = replies.CreateReply(ctx, p)
		require.NoError(t, err)
		got, err := replies.ClaimReplies(ctx, "a", later, later.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, got, 1, "only the queued one; a pending reply waits for its approver")
		require.Equal(t, "f1", got[0].ID)
		r, ok, err = replies.DeclineReply(ctx, "p1", "declined by Jane", t0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, reply.StatusDeclined, r.Status)
		_, ok, err = replies.DeclineReply(ctx, "p1", "again", t0)
		require.NoError(t, err)
		require.False(t, ok, "decided once")

		all, next, err := replies.ListReplies(ctx, reply.Filter{Agent: thread.Agent, Limit: 1})
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.NotEmpty(t, next)
		rest, next, err := replies.ListReplies(ctx, reply.Filter{Agent: thread.Agent, Limit: 1, Cursor: next})
		require.NoError(t, err)
		require.Len(t, rest, 1)
		require.Empty(t, next)
		require.NotEqual(t, all[0].ID, rest[0].ID)
		declined, _, err := replies.ListReplies(ctx, reply.Filter{Status: []reply.Status{reply.StatusDeclined}, Source: "slack"})
		require.NoError(t, err)
		require.Len(t, declined, 1)
		require.Equal(t, "p1", declined[0].ID)
		none, _, err := replies.ListReplies(ctx, reply.Filter{Connector: "other"})
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

// Replicas claiming at once each get a reply at most once.
func TestReplyClaimsDoNotOverlap(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		replies := store.NewReplies(s)
		ctx := context.Background()
		for i := range 40 {
			_, _, err := replies.CreateReply(ctx, newReply("c"+string(rune('A'+i)), t0))
			require.NoError(t, err)
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for {
					got, err := replies.ClaimReplies(ctx, string(rune('a'+w)), t0, t0.Add(time.Minute), 3)
					if err != nil || len(got) == 0 {
						return
					}
					mu.Lock()
					for _, r := range got {
						seen[r.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, 40)
		for id, n := range seen {
			require.Equal(t, 1, n, id)
		}
	})
}

func TestThreadOriginsNewestFirst(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		replies := store.NewReplies(s)
		ctx := context.Background()
		n := comment("first", "k1", "")
		n.Metadata = map[string]any{reply.MetadataKey: map[string]any{"source": "github", "connector": "acme", "repo": "acme/api", "number": 7},
			"verified_by": "hmac-github"}
		ingest(t, svc, "d1", n)
		plain := comment("no origin", "k2", "")
		ingest(t, svc, "d2", plain)
		n2 := comment("second", "k3", "")
		n2.Metadata = map[string]any{reply.MetadataKey: map[string]any{"source": "slack", "connector": "acme", "channel": "D1"},
			"verified_by": "slack-v0"}
		ingest(t, svc, "d3", n2)
		// The same place again from a record of another provenance: listed apart, the
		// outbox decides whom it trusts.
		n3 := comment("planted", "k4", "")
		n3.Metadata = map[string]any{reply.MetadataKey: map[string]any{"source": "slack", "connector": "acme", "channel": "D1"},
			"verified_by": "agent-token"}
		ingest(t, svc, "d4", n3)
		again := comment("second again", "k5", "")
		again.Metadata = n2.Metadata
		ingest(t, svc, "d5", again) // d3's origin and provenance again: listed once

		got, err := replies.ThreadOrigins(ctx, thread, 100)
		require.NoError(t, err)
		require.Equal(t, []reply.Origin{
			{To: reply.NewTo("slack", "acme", slack.Place{Channel: "D1"}), VerifiedBy: "slack-v0"},
			{To: reply.NewTo("slack", "acme", slack.Place{Channel: "D1"}), VerifiedBy: "agent-token"},
			{To: reply.NewTo("github", "acme", github.Place{Repo: "acme/api", Number: 7}), VerifiedBy: "hmac-github"}}, got)
		other, err := replies.ThreadOrigins(ctx, inbox.ThreadKey{Agent: thread.Agent, Resource: "x", Thread: "y"}, 100)
		require.NoError(t, err)
		require.Empty(t, other)
	})
}
