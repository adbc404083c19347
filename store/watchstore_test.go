package store_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

// Both backends keep watches as the in-memory fake does (watchtest's conformance suite):
// one live watch per thread and key, the per-agent cap under concurrent creates, ends
// that happen once, lookups by key and expiry.
func TestWatchStoreConforms(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			watchtest.Run(t, func(t *testing.T) watch.Store { return store.NewWatches(openFresh(t, b.Name)) })
		})
	}
}

// openFresh opens a new, empty database of the backend named (Backends' databases are
// one per call).
func openFresh(t *testing.T, backend string) *store.DB {
	if backend == store.DriverPostgres {
		dsn := os.Getenv(storetest.PostgresEnv)
		return storetest.Open(t, storetest.Backend{Name: backend, Config: storetest.PostgresConfig(t, dsn)})
	}
	return storetest.OpenSQLite(t)
}

// A caller's values over what an index holds are a clear invalid-watch error, not a
// database failure.
func TestCreateWatchRefusesOverlongValues(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		watches := store.NewWatches(s)
		ctx := context.Background()
		ok := watch.Watch{ID: "w-1", Thread: thread, Source: "github", Connector: "gh", Resource: "acme/api#7",
			CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		for name, edit := range map[string]func(w *watch.Watch){
			"resource":   func(w *watch.Watch) { w.Resource = strings.Repeat("r", watch.MaxResourceBytes+1) },
			"thread":     func(w *watch.Watch) { w.Thread.Thread = strings.Repeat("t", inbox.MaxIDBytes+1) },
			"connector":  func(w *watch.Watch) { w.Connector = strings.Repeat("c", inbox.MaxLabelBytes+1) },
			"kinds":      func(w *watch.Watch) { w.Kinds = make([]string, watch.MaxKinds+1) },
			"kind":       func(w *watch.Watch) { w.Kinds = []string{strings.Repeat("k", watch.MaxKindBytes+1)} },
			"no id":      func(w *watch.Watch) { w.ID = "" },
			"no thread":  func(w *watch.Watch) { w.Thread = inbox.ThreadKey{} },
			"no resouce": func(w *watch.Watch) { w.Resource = "" },
		} {
			w := ok
			edit(&w)
			_, _, err := watches.CreateWatch(ctx, w, 10)
			require.ErrorIs(t, err, watch.ErrInvalid, name)
		}
		_, created, err := watches.CreateWatch(ctx, ok, 10)
		require.NoError(t, err)
		require.True(t, created)
		taken := ok
		taken.Resource = "acme/api#8"
		_, _, err = watches.CreateWatch(ctx, taken, 10)
		require.ErrorIs(t, err, watch.ErrInvalid, "an id in use")
	})
}

// A watch ends once however many ways its end is announced (a terminal event and the
// expiry sweep both saw it live): the first announcement ends it and is stored, a later
// one is dropped, so the thread gets exactly one watch-ended record.
func TestIngestEndsWatchOnce(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		watches := store.NewWatches(s)
		ctx := context.Background()
		w, _, err := watches.CreateWatch(ctx, watch.Watch{ID: "w-1", Thread: thread, Source: "github", Connector: "acme",
			Resource: "acme/api#7", CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0}, 10)
		require.NoError(t, err)

		merged := comment("Jane merged acme/api#7", "", "")
		first := ingest(t, svc, "d-merged", merged, watch.Ended(w, watch.EndMerged))
		require.Len(t, first.Records, 2, "the event's record and the announcement")

		sweep := &inbox.Event{Source: watch.EndedSource, Connector: watch.EndedSource, DeliveryID: "expired:w-1",
			Type: watch.Kind, Body: []byte(`{}`)}
		second, err := svc.Ingest(ctx, sweep, []inbox.Notification{watch.Ended(w, watch.EndExpired)})
		require.NoError(t, err)
		require.False(t, second.Duplicate)
		require.Empty(t, second.Records, "the watch had ended: nothing to announce")
		ev, err := explain.GetEvent(ctx, second.EventID)
		require.NoError(t, err)
		require.Equal(t, 0, ev.Records)
		require.Equal(t, inbox.EventUnrouted, ev.Status)

		again, err := svc.Ingest(ctx, event("d-merged"), []inbox.Notification{merged, watch.Ended(w, watch.EndMerged)})
		require.NoError(t, err)
		require.True(t, again.Duplicate, "a redelivery changes nothing")

		unknown := w
		unknown.ID = "w-unknown"
		res := ingest(t, svc, "d-unknown", comment("Jane commented", "", ""), watch.Ended(unknown, watch.EndClosed))
		require.Len(t, res.Records, 1, "no watch to end: only the event's record")
		ev, err = explain.GetEvent(ctx, res.EventID)
		require.NoError(t, err)
		require.Equal(t, 1, ev.Records)
		require.Equal(t, inbox.EventRouted, ev.Status)

		recs, _, err := store.NewAdmin(s).ListRecords(ctx, inbox.RecordFilter{Agent: thread.Agent, Kind: watch.Kind})
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, 1, recs[0].CoalescedCount)
		require.Equal(t, first.EventID, recs[0].EventID)
		got, err := watches.Watch(ctx, "w-1")
		require.NoError(t, err)
		require.Equal(t, watch.EndMerged, got.EndReason, "the first end stands")
		require.Equal(t, t0, *got.EndedAt)
	})
}

// A GitHub connector's repositories are the ones it received a verified delivery for,
// by name regardless of case.
func TestSeenRepos(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		seenReposStore := store.NewSeenRepos(s)
		ctx := context.Background()
		seen, err := seenReposStore.RepoSeen(ctx, "gh", "acme/api")
		require.NoError(t, err)
		require.False(t, seen)
		for range 2 {
			require.NoError(t, seenReposStore.SeenRepo(ctx, "gh", "Acme/API", t0))
		}
		for _, c := range []struct {
			connector, repo string
			want            bool
		}{{"gh", "acme/api", true}, {"gh", "ACME/api", true}, {"gh2", "acme/api", false}, {"gh", "acme/other", false}} {
			seen, err := seenReposStore.RepoSeen(ctx, c.connector, c.repo)
			require.NoError(t, err)
			require.Equal(t, c.want, seen, "%s %s", c.connector, c.repo)
		}
		require.ErrorIs(t, seenReposStore.SeenRepo(ctx, "gh", "", t0), watch.ErrInvalid)
		require.ErrorIs(t, seenReposStore.SeenRepo(ctx, "gh", strings.Repeat("a", watch.MaxResourceBytes+1), t0), watch.ErrInvalid)
	})
}
