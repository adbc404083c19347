package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

var (
	t0     = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	thread = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
)

// forEach runs the conformance suite against every configured backend.
func forEach(t *testing.T, fn func(t *testing.T, s *store.DB, svc *inbox.Service)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := storetest.Open(t, b)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			require.NoError(t, err)
			svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
			fn(t, s, svc)
		})
	}
}

func comment(summary, dedupe, coalesce string) inbox.Notification {
	return inbox.Notification{
		Thread: thread, Source: "github", Kind: "comment", Summary: summary,
		DedupeKey: dedupe, CoalesceKey: coalesce,
		Attributes: inbox.Attributes{{Key: "repo", Value: "acme/api"}},
		Metadata:   map[string]any{"author": "jane"},
	}
}

func event(delivery string) *inbox.Event {
	return &inbox.Event{Source: "github", Connector: "acme", DeliveryID: delivery, Type: "issue_comment", Body: []byte(`{}`)}
}

func ingest(t testing.TB, svc *inbox.Service, delivery string, ns ...inbox.Notification) inbox.IngestResult {
	t.Helper()
	res, err := svc.Ingest(context.Background(), event(delivery), ns)
	require.NoError(t, err)
	return res
}

func TestCreateDefaults(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		res := ingest(t, svc, "d1", comment("Jane commented", "k1", ""))
		require.False(t, res.Duplicate)
		require.Len(t, res.Records, 1)
		r, err := store.NewAdmin(s).GetRecord(context.Background(), res.Records[0].RecordID)
		require.NoError(t, err)
		require.Equal(t, inbox.PriorityMedium, r.Priority)
		require.Equal(t, inbox.StatusPending, r.Status)
		require.Equal(t, 1, r.CoalescedCount)
		require.Equal(t, inbox.ActionDeliver, r.Action)
		require.Equal(t, "default: medium priority, thread idle → deliver now (wakes)", r.Reason)
		require.Equal(t, t0, *r.DeliverAt)
		require.Nil(t, r.SummaryAt)
		require.Equal(t, inbox.Attributes{{Key: "repo", Value: "acme/api"}}, r.Attributes)
		require.Equal(t, "jane", r.Metadata["author"])
		require.Equal(t, res.EventID, r.EventID)
	})
}

func TestDedupe(t *testing.T) {
	ctx := context.Background()
	t.Run("same dedupeKey merges", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			first := ingest(t, svc, "d1", comment("first", "k1", ""))
			n := comment("second", "k1", "")
			n.Attributes = inbox.Attributes{{Key: "url", Value: "https://x"}, {Key: "repo", Value: "acme/web"}}
			n.Metadata = map[string]any{"author": "joe", "extra": true}
			second := ingest(t, svc, "d2", n)
			require.True(t, second.Records[0].Merged)
			require.Equal(t, first.Records[0].RecordID, second.Records[0].RecordID)
			recs, err := store.NewRecords(s).ThreadRecords(ctx, thread)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.Equal(t, 2, recs[0].CoalescedCount)
			require.Equal(t, "second", recs[0].Summary)
			require.Equal(t, inbox.Attributes{{Key: "repo", Value: "acme/web"}, {Key: "url", Value: "https://x"}}, recs[0].Attributes)
			require.Equal(t, map[string]any{"author": "joe", "extra": true}, recs[0].Metadata)
		})
	})
	t.Run("same key different kind stays apart", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			ingest(t, svc, "d1", comment("a", "k1", ""))
			n := comment("b", "k1", "")
			n.Kind = "pr-review"
			require.False(t, ingest(t, svc, "d2", n).Records[0].Merged)
			recs, err := store.NewRecords(s).ThreadRecords(ctx, thread)
			require.NoError(t, err)
			require.Len(t, recs, 2)
		})
	})
	t.Run("delivered record never absorbs", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			records := store.NewRecords(s)
			first := ingest(t, svc, "d1", comment("a", "k1", ""))
			require.NoError(t, records.SetRecordStatus(ctx, first.Records[0].RecordID, inbox.StatusDelivered, t0))
			second := ingest(t, svc, "d2", comment("b", "k1", ""))
			require.False(t, second.Records[0].Merged)
			require.NotEqual(t, first.Records[0].RecordID, second.Records[0].RecordID)
			pending, err := records.ThreadRecords(ctx, thread, inbox.StatusPending)
			require.NoError(t, err)
			require.Len(t, pending, 1)
			require.Equal(t, "b", pending[0].Summary)
		})
	})
	t.Run("seen record never absorbs", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			first := ingest(t, svc, "d1", comment("a", "", "pr#7"))
			require.NoError(t, store.NewRecords(s).SetRecordStatus(ctx, first.Records[0].RecordID, inbox.StatusSeen, t0))
			require.False(t, ingest(t, svc, "d2", comment("b", "", "pr#7")).Records[0].Merged)
		})
	})
	t.Run("same coalesceKey different dedupeKeys merges", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			ingest(t, svc, "d1", comment("one", "c1", "pr#7"))
			ingest(t, svc, "d2", comment("two", "c2", "pr#7"))
			recs, err := store.NewRecords(s).ThreadRecords(ctx, thread)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.Equal(t, 2, recs[0].CoalescedCount)
			require.Equal(t, "two", recs[0].Summary)
		})
	})
	t.Run("other thread stays apart", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			ingest(t, svc, "d1", comment("one", "k1", ""))
			n := comment("two", "k1", "")
			n.Thread.Thread = "acme/api#8"
			require.False(t, ingest(t, svc, "d2", n).Records[0].Merged)
		})
	})
	t.Run("merge keeps priority unless given", func(t *testing.T) {
		forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
			reads := store.NewAdmin(s)
			n := comment("one", "k1", "")
			n.Priority = inbox.PriorityHigh
			first := ingest(t, svc, "d1", n)
			ingest(t, svc, "d2", comment("two", "k1", ""))
			r, err := reads.GetRecord(ctx, first.Records[0].RecordID)
			require.NoError(t, err)
			require.Equal(t, inbox.PriorityHigh, r.Priority)
			n3 := comment("three", "k1", "")
			n3.Priority = inbox.PriorityUrgent
			ingest(t, svc, "d3", n3)
			r, err = reads.GetRecord(ctx, first.Records[0].RecordID)
			require.NoError(t, err)
			require.Equal(t, inbox.PriorityUrgent, r.Priority)
			require.Equal(t, 3, r.CoalescedCount)
		})
	})
}

func TestProviderIdempotency(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		records := store.NewRecords(s)
		ctx := context.Background()
		first := ingest(t, svc, "delivery-1", comment("a", "k1", ""))
		second := ingest(t, svc, "delivery-1", comment("a again", "k1", ""))
		require.True(t, second.Duplicate)
		require.Empty(t, second.Records)
		require.Equal(t, first.EventID, second.EventID)
		n, err := store.NewAdmin(s).CountEvents(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		recs, err := records.ThreadRecords(ctx, thread)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, 1, recs[0].CoalescedCount)
		require.Equal(t, "a", recs[0].Summary)

		// Same id from another connector is a different delivery.
		ev := event("delivery-1")
		ev.Connector = "other"
		res, err := svc.Ingest(ctx, ev, []inbox.Notification{comment("b", "k9", "")})
		require.NoError(t, err)
		require.False(t, res.Duplicate)

		// Still a duplicate after the record was delivered.
		require.NoError(t, records.SetRecordStatus(ctx, first.Records[0].RecordID, inbox.StatusDelivered, t0))
		require.True(t, ingest(t, svc, "delivery-1", comment("a", "k1", "")).Duplicate)

		stored, err := store.NewExplain(s).GetEvent(ctx, first.EventID)
		require.NoError(t, err)
		require.Equal(t, "delivery-1", stored.DeliveryID)
		require.Equal(t, inbox.EventRouted, stored.Status)
		require.Equal(t, 1, stored.Records)
		require.Equal(t, []byte(`{}`), stored.Body)
	})
}

func TestUnroutedEventStored(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		res := ingest(t, svc, "d1")
		ev, err := store.NewExplain(s).GetEvent(context.Background(), res.EventID)
		require.NoError(t, err)
		require.Equal(t, inbox.EventUnrouted, ev.Status)
		require.Equal(t, 0, ev.Records)
	})
}

func TestConcurrentDedupe(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		const workers = 50
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := make(chan struct{})
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := svc.Ingest(context.Background(), event(fmt.Sprintf("d%d", i)),
					[]inbox.Notification{comment(fmt.Sprintf("c%d", i), "same", "")})
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		recs, err := store.NewRecords(s).ThreadRecords(context.Background(), thread)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, workers, recs[0].CoalescedCount)
		n, err := store.NewAdmin(s).CountEvents(context.Background())
		require.NoError(t, err)
		require.Equal(t, workers, n)
	})
}

func TestDiscardDecision(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := storetest.Open(t, b)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{Sources: map[string]inbox.ActionSpec{"github": {Action: inbox.ActionDiscard}}})
			require.NoError(t, err)
			svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
			res := ingest(t, svc, "d1", comment("a", "k1", ""))
			r, err := store.NewAdmin(s).GetRecord(context.Background(), res.Records[0].RecordID)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusDiscarded, r.Status)
			require.Equal(t, "source github → discard", r.Reason)
			// A discarded record does not absorb the next one.
			require.False(t, ingest(t, svc, "d2", comment("b", "k1", "")).Records[0].Merged)
		})
	}
}

func TestHostileTextStored(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		n := comment("nul\x00byte and bad \xff utf8", "k\x00", "")
		res := ingest(t, svc, "d\x00", n)
		r, err := store.NewAdmin(s).GetRecord(context.Background(), res.Records[0].RecordID)
		require.NoError(t, err)
		require.Equal(t, "nul\uFFFDbyte and bad \uFFFD utf8", r.Summary)
	})
}

func TestCheckpointCommitsWithEvent(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		connState := store.NewConnectorState(s)
		ctx := context.Background()
		ev := event("m1")
		ev.Checkpoint = &inbox.Checkpoint{Connector: "email/support", Key: "INBOX", Value: "7:42"}
		first, err := svc.Ingest(ctx, ev, []inbox.Notification{comment("a", "k", "")})
		require.NoError(t, err)
		v, ok, err := connState.ConnectorState(ctx, "email/support", "INBOX")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "7:42", v)

		// A duplicate still advances the cursor (the message was already committed).
		dup := event("m1")
		dup.Checkpoint = &inbox.Checkpoint{Connector: "email/support", Key: "INBOX", Value: "7:43"}
		res, err := svc.Ingest(ctx, dup, nil)
		require.NoError(t, err)
		require.True(t, res.Duplicate)
		all, err := connState.ConnectorStates(ctx, "email/support")
		require.NoError(t, err)
		require.Equal(t, map[string]string{"INBOX": "7:43"}, all)

		// A failed ingest leaves the cursor where it was.
		bad := event("m2")
		bad.ID, bad.ReceivedAt, bad.Status = "e-bad", t0, inbox.EventRouted
		bad.Checkpoint = &inbox.Checkpoint{Connector: "email/support", Key: "INBOX", Value: "7:44"}
		_, err = store.NewInbox(s).Ingest(ctx, bad, []inbox.Notification{comment("b", "k2", "")},
			func(inbox.Subject, inbox.Presence, time.Time) inbox.Decision {
				return inbox.Decision{Action: inbox.ActionDeliver}
			},
			func() string { return first.Records[0].RecordID }) // an existing record id: the insert fails
		require.Error(t, err)
		v, _, err = connState.ConnectorState(ctx, "email/support", "INBOX")
		require.NoError(t, err)
		require.Equal(t, "7:43", v)
		_, ok, err = connState.ConnectorState(ctx, "email/support", "Archive")
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// A merge the policy would discard must not discard a record whose details were waiting
// in the inbox (its summary already sent): the merge keeps the stronger outcome.
func TestMergeDiscardKeepsWaitingRecord(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			reads := store.NewAdmin(s)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{Rules: []inbox.Rule{
				{Match: inbox.RuleMatch{Attributes: map[string]string{"noise": "yes"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDiscard}},
				{Match: inbox.RuleMatch{Source: inbox.StringList{"github"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionSummarize}},
			}})
			require.NoError(t, err)
			svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { return t0 }))
			first := ingest(t, svc, "d1", comment("details", "k1", ""))
			r, err := reads.GetRecord(ctx, first.Records[0].RecordID)
			require.NoError(t, err)
			require.Equal(t, inbox.ActionSummarize, r.Action)
			completeSummary(t, s, r)

			n := comment("more details", "k1", "")
			n.Attributes = inbox.Attributes{{Key: "noise", Value: "yes"}}
			second := ingest(t, svc, "d2", n)
			require.True(t, second.Records[0].Merged)
			require.Equal(t, inbox.ActionDiscard, second.Records[0].Decision.Action)
			r, err = reads.GetRecord(ctx, r.ID)
			require.NoError(t, err)
			require.Equal(t, inbox.StatusPending, r.Status, "the waiting record stays in the inbox")
			require.Equal(t, inbox.ActionSummarize, r.Action)
			require.Equal(t, "more details", r.Summary)
			require.Equal(t, 2, r.CoalescedCount)
		})
	}
}
