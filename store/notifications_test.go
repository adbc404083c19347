package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func TestListThreadRecords(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		records := store.NewRecords(s)
		clock := t0
		pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
		require.NoError(t, err)
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return clock }))
		var ids []string
		for i, sum := range []string{"CI failed on main", "Jane commented 50% done", "Deploy_ok", "PR merged"} {
			clock = t0.Add(time.Duration(i) * time.Second)
			n := comment(sum, "", "")
			if i == 3 {
				n.Source = "slack"
			}
			ids = append(ids, ingest(t, svc, "d"+sum, n).Records[0].RecordID)
		}
		list := func(q agent.RecordQuery) []string {
			q.Thread = thread
			recs, err := records.ListThreadRecords(ctx, q)
			require.NoError(t, err)
			var out []string
			for _, r := range recs {
				out = append(out, r.ID)
			}
			return out
		}
		require.Equal(t, []string{ids[3], ids[2], ids[1], ids[0]}, list(agent.RecordQuery{}), "newest first")
		require.Equal(t, []string{ids[0], ids[1]}, list(agent.RecordQuery{Oldest: true, Limit: 2}))
		require.Equal(t, []string{ids[0]}, list(agent.RecordQuery{Search: "ci FAIL"}), "case-insensitive")
		require.Equal(t, []string{ids[1]}, list(agent.RecordQuery{Search: "50%"}), "% is literal")
		require.Equal(t, []string{ids[2]}, list(agent.RecordQuery{Search: "_"}), "_ is literal")
		require.Equal(t, []string{ids[3]}, list(agent.RecordQuery{Search: "slack"}), "source matches")
		require.Len(t, list(agent.RecordQuery{Search: "comment"}), 4, "kind matches")
		require.Equal(t, []string{ids[3]}, list(agent.RecordQuery{Sources: []string{"slack"}}), "source filter")
		require.Equal(t, []string{ids[3], ids[2], ids[1], ids[0]}, list(agent.RecordQuery{Sources: []string{"github", "slack"}}))
		require.Equal(t, []string{ids[2], ids[1], ids[0]}, list(agent.RecordQuery{Sources: []string{"github"}, Kinds: []string{"comment"}}))
		require.Empty(t, list(agent.RecordQuery{Kinds: []string{"push"}}), "kind filter")

		recs, err := records.ListThreadRecords(ctx, agent.RecordQuery{Thread: thread, Limit: 2})
		require.NoError(t, err)
		cur := agent.RecordCursor{CreatedAt: recs[1].CreatedAt, ID: recs[1].ID}
		parsed, err := agent.ParseRecordCursor(cur.String())
		require.NoError(t, err)
		require.Equal(t, []string{ids[1], ids[0]}, list(agent.RecordQuery{After: &parsed}))

		require.NoError(t, records.MarkSeen(ctx, []string{ids[0], ids[1]}, t0))
		require.Equal(t, []string{ids[3], ids[2]}, list(agent.RecordQuery{Statuses: []inbox.Status{inbox.StatusPending}}))

		got, err := records.ThreadRecordsByID(ctx, thread, []string{ids[2], "nope", ids[0]})
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, ids[2], got[0].ID)
		require.Equal(t, ids[0], got[1].ID)
		other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
		got, err = records.ThreadRecordsByID(ctx, other, ids)
		require.NoError(t, err)
		require.Empty(t, got)
	})
}

func TestTransitionRecord(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		records := store.NewRecords(s)
		id := ingest(t, svc, "d1", comment("x", "", "")).Records[0].RecordID
		pendingOrDelivered := []inbox.Status{inbox.StatusPending, inbox.StatusDelivered}
		r, changed, err := records.TransitionRecord(ctx, thread, id, inbox.StatusSeen, pendingOrDelivered, t0)
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, inbox.StatusSeen, r.Status)
		due, err := store.NewQueue(s).NextDue(ctx, t0)
		require.NoError(t, err)
		require.Nil(t, due, "a seen record is no longer dispatched")

		r, changed, err = records.TransitionRecord(ctx, thread, id, inbox.StatusSeen, pendingOrDelivered, t0)
		require.NoError(t, err)
		require.False(t, changed)
		require.Equal(t, inbox.StatusSeen, r.Status)

		other := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "other"}
		_, _, err = records.TransitionRecord(ctx, other, id, inbox.StatusDismissed, []inbox.Status{inbox.StatusSeen}, t0)
		require.ErrorIs(t, err, inbox.ErrNotFound)
	})
}

// TestRecordMastraFields: a record keeps its sourceId (never a merge key: a second
// notification with the same key but another sourceId merges and the newer id wins) and
// the times Mastra's records carry: seenAt, dismissedAt, archivedAt (each set once).
func TestRecordMastraFields(t *testing.T) {
	ctx := context.Background()
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		records := store.NewRecords(s)
		n := comment("x", "same", "")
		n.SourceID = "42"
		id := ingest(t, svc, "d1", n).Records[0].RecordID
		n.SourceID = "43"
		again := ingest(t, svc, "d2", n).Records[0]
		require.True(t, again.Merged, "sourceId is no merge key")
		got, err := records.ThreadRecordsByID(ctx, thread, []string{id})
		require.NoError(t, err)
		require.Equal(t, "43", got[0].SourceID)
		require.Nil(t, got[0].SeenAt)

		t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
		require.NoError(t, records.MarkSeen(ctx, []string{id}, t1))
		r, _, err := records.TransitionRecord(ctx, thread, id, inbox.StatusDismissed, []inbox.Status{inbox.StatusSeen}, t2)
		require.NoError(t, err)
		require.True(t, r.SeenAt.Equal(t1))
		require.True(t, r.DismissedAt.Equal(t2))
		r, _, err = records.TransitionRecord(ctx, thread, id, inbox.StatusArchived, []inbox.Status{inbox.StatusDismissed}, t2.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, r.SeenAt.Equal(t1), "seenAt stays")
		require.True(t, r.ArchivedAt.Equal(t2.Add(time.Minute)))
	})
}
