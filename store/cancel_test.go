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

// CancelMessages dismisses the thread's pending messages named by record or signal id,
// answers exactly the ids that named one, and touches nothing else: a notification, a
// message handed over already, another thread's message.
func TestCancelMessages(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		reads := store.NewAdmin(s)
		records := store.NewRecords(s)
		pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
		require.NoError(t, err)
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
		msg := func(delivery string, k inbox.ThreadKey, as string) inbox.Record {
			n := comment("m "+delivery, "", "")
			n.Thread, n.DeliverAs = k, as
			id := ingest(t, svc, delivery, n).Records[0].RecordID
			r, err := reads.GetRecord(ctx, id)
			require.NoError(t, err)
			return r
		}
		other := inbox.ThreadKey{Agent: thread.Agent, Resource: thread.Resource, Thread: "other"}
		a := msg("a", thread, inbox.DeliverAsQueued)
		b := msg("b", thread, inbox.DeliverAsQueued)
		c := msg("c", thread, inbox.DeliverAsMessage)
		note := msg("n", thread, inbox.DeliverAsNotification)
		handed := msg("h", thread, inbox.DeliverAsQueued)
		require.NoError(t, records.SetRecordStatus(ctx, handed.ID, inbox.StatusDelivered, t0))
		elsewhere := msg("e", other, inbox.DeliverAsQueued)

		got, err := records.CancelMessages(ctx, thread, []string{agent.RecordSignalID(b), "unknown", a.ID, note.ID, handed.ID,
			elsewhere.ID, agent.RecordSignalID(elsewhere), a.ID, c.ID}, t0)
		require.NoError(t, err)
		require.Equal(t, []string{agent.RecordSignalID(b), a.ID, c.ID}, got, "in the order given, each once")
		for r, want := range map[string]inbox.Status{a.ID: inbox.StatusDismissed, b.ID: inbox.StatusDismissed, c.ID: inbox.StatusDismissed,
			note.ID: inbox.StatusPending, handed.ID: inbox.StatusDelivered, elsewhere.ID: inbox.StatusPending} {
			rec, err := reads.GetRecord(ctx, r)
			require.NoError(t, err)
			require.Equal(t, want, rec.Status, rec.Summary)
			if want == inbox.StatusDismissed {
				require.Nil(t, rec.DueAt(), "a dismissed message is never due")
			}
		}
		got, err = records.CancelMessages(ctx, thread, []string{a.ID}, t0)
		require.NoError(t, err)
		require.Empty(t, got, "cancelled once")
		require.NotNil(t, got)
	})
}

// While a delivery pass holds the thread it may be handing the messages over: nothing is
// cancelled then, so an id in the answer never reaches the agent.
func TestCancelMessagesLeasedThread(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, s *store.DB) {
		records := store.NewRecords(s)
		pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
		require.NoError(t, err)
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
		n := comment("m", "", "")
		n.DeliverAs = inbox.DeliverAsQueued
		id := ingest(t, svc, "q", n).Records[0].RecordID
		claimed, err := store.NewQueue(s).ClaimThreads(ctx, "pass", t0, t0.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Equal(t, []inbox.ThreadKey{thread}, claimed)

		got, err := records.CancelMessages(ctx, thread, []string{id}, t0.Add(time.Second))
		require.NoError(t, err)
		require.Empty(t, got)
		rec, err := store.NewAdmin(s).GetRecord(ctx, id)
		require.NoError(t, err)
		require.Equal(t, inbox.StatusPending, rec.Status)

		got, err = records.CancelMessages(ctx, thread, []string{id}, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, []string{id}, got, "a lapsed lease holds nothing back")
	})
}
