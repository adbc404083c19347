package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func TestListEventsPagesNewestFirst(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		reads := store.NewAdmin(s)
		ctx := context.Background()
		pol, _ := inbox.NewPolicy(inbox.PolicyConfig{})
		clock := t0
		svc := inbox.NewService(store.NewInbox(s), pol, inbox.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
		for i := range 7 {
			ev := event(fmt.Sprintf("d%d", i))
			if i%2 == 1 {
				ev.Connector = "other"
			}
			var ns []inbox.Notification
			if i < 5 {
				ns = []inbox.Notification{comment("c", fmt.Sprintf("k%d", i), "")}
			}
			_, err := svc.Ingest(ctx, ev, ns)
			require.NoError(t, err)
		}
		_, err := svc.Ingest(ctx, event("d0"), nil) // a redelivery
		require.NoError(t, err)

		var got []string
		cursor := ""
		for range 10 {
			page, next, err := reads.ListEvents(ctx, inbox.EventFilter{Limit: 3, Cursor: cursor})
			require.NoError(t, err)
			for _, ev := range page {
				got = append(got, ev.DeliveryID)
				require.Nil(t, ev.Body, "lists omit bodies")
			}
			if next == "" {
				break
			}
			cursor = next
		}
		require.Equal(t, []string{"d6", "d5", "d4", "d3", "d2", "d1", "d0"}, got)

		list := func(f inbox.EventFilter) []string {
			page, _, err := reads.ListEvents(ctx, f)
			require.NoError(t, err)
			var ids []string
			for _, ev := range page {
				ids = append(ids, ev.DeliveryID)
			}
			return ids
		}
		yes, no := true, false
		require.Equal(t, []string{"d5", "d3", "d1"}, list(inbox.EventFilter{Connector: "other"}))
		require.Equal(t, []string{"d6", "d5"}, list(inbox.EventFilter{Status: inbox.EventUnrouted}))
		require.Equal(t, []string{"d0"}, list(inbox.EventFilter{Duplicate: &yes}))
		require.Len(t, list(inbox.EventFilter{Duplicate: &no}), 6)
		require.Equal(t, []string{"d2", "d1"}, list(inbox.EventFilter{Since: t0.Add(2 * time.Second), Until: t0.Add(4 * time.Second)}))

		_, _, err = reads.ListEvents(ctx, inbox.EventFilter{Cursor: "not-a-cursor"})
		require.ErrorIs(t, err, inbox.ErrBadCursor)
	})
}

func TestListRecordsFilters(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		ctx := context.Background()
		a := comment("Jane: 100% sure_thing", "k1", "")
		b := comment("Build failed", "k2", "")
		b.Kind, b.Priority = "ci-failure", inbox.PriorityHigh
		c := comment("other thread", "k3", "")
		c.Thread.Thread = "acme/api#9"
		ingest(t, svc, "d1", a)
		ingest(t, svc, "d2", b)
		ingest(t, svc, "d3", c)

		summaries := func(f inbox.RecordFilter) []string {
			page, _, err := store.NewAdmin(s).ListRecords(ctx, f)
			require.NoError(t, err)
			var out []string
			for _, r := range page {
				out = append(out, r.Summary)
			}
			return out
		}
		require.Equal(t, []string{"Build failed", "Jane: 100% sure_thing"}, summaries(inbox.RecordFilter{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}))
		require.Equal(t, []string{"Build failed"}, summaries(inbox.RecordFilter{Priority: inbox.PriorityHigh}))
		require.Equal(t, []string{"Build failed"}, summaries(inbox.RecordFilter{Text: "CI-FAIL"}))
		require.Equal(t, []string{"Jane: 100% sure_thing"}, summaries(inbox.RecordFilter{Text: "100%"}))
		require.Empty(t, summaries(inbox.RecordFilter{Text: "0_%"}), "LIKE wildcards match literally")
		require.Len(t, summaries(inbox.RecordFilter{Status: []inbox.Status{inbox.StatusPending}}), 3)
		require.Empty(t, summaries(inbox.RecordFilter{Status: []inbox.Status{inbox.StatusSeen}}))
	})
}

// TestFiltersAreParameterised sends SQL metacharacters through every filter: they
// must match nothing and break nothing.
func TestFiltersAreParameterised(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		reads := store.NewAdmin(s)
		ctx := context.Background()
		ingest(t, svc, "d1", comment("x", "k1", ""))
		for _, evil := range []string{`'`, `"`, `'; DROP TABLE records; --`, `%`, `_`, `\`, `' OR '1'='1`, "\x00", `$1`, `?`} {
			events, _, err := reads.ListEvents(ctx, inbox.EventFilter{Source: evil, Connector: evil, Type: evil, Status: inbox.EventStatus(evil)})
			require.NoError(t, err, evil)
			require.Empty(t, events)
			records, _, err := reads.ListRecords(ctx, inbox.RecordFilter{Agent: evil, Resource: evil, Thread: evil, Source: evil,
				Kind: evil, Priority: inbox.Priority(evil), EventID: evil, Status: []inbox.Status{inbox.Status(evil)}})
			require.NoError(t, err, evil)
			require.Empty(t, records)
			records, _, err = reads.ListRecords(ctx, inbox.RecordFilter{Text: evil})
			require.NoError(t, err, evil)
			require.Empty(t, records, evil)
		}
		all, _, err := reads.ListRecords(ctx, inbox.RecordFilter{})
		require.NoError(t, err)
		require.Len(t, all, 1)
	})
}
