package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// seedWatches gives store n live watches: two threads watch each pull request
// acme/repo<i/200>#<i/2>, each of 1,000 agents holding n/1,000.
func seedWatches(tb testing.TB, s *store.DB, n int) {
	tb.Helper()
	ws := make([]watch.Watch, n)
	for i := range ws {
		ws[i] = watch.Watch{ID: fmt.Sprintf("w-%09d", i),
			Thread: inbox.ThreadKey{Agent: fmt.Sprintf("agent%d", i%1000), Resource: "res", Thread: fmt.Sprintf("t%d", i)},
			Source: "github", Connector: "gh", Resource: fmt.Sprintf("acme/repo%d#%d", i/200, i/2),
			CreatedAt: t0, ExpiresAt: t0.Add(time.Duration(i%5000) * time.Minute)}
	}
	require.NoError(tb, s.SeedWatches(context.Background(), ws))
}

// eventKeys are the keys one event of pull request i looks up: the pull request, its
// repository, and two keys no watch holds (another connector's, an email thread's).
func eventKeys(i int) []string {
	return []string{
		watch.Key("github", "gh", fmt.Sprintf("acme/repo%d#%d", i/200, i/2)),
		watch.Key("github", "gh", fmt.Sprintf("acme/repo%d", i/200)),
		watch.Key("github", "other", fmt.Sprintf("acme/repo%d#%d", i/200, i/2)),
		watch.Key("email", "mail", fmt.Sprintf("m%d@example.com", i)),
	}
}

// Matching an event against the watches, the sweep's due list and the per-agent count
// go by an index, never a scan of the table (an event must cost the same with 100,000
// watches as with ten).
func TestWatchQueriesUseIndexes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		seedWatches(t, s, 5000)
		plans, err := s.WatchPlans(context.Background(), eventKeys(42))
		require.NoError(t, err)
		want := map[string]string{"live": `watches_live\b`, "due": `watches_due\b`, "count": `(?i)index.* watches_\w+`}
		for name, plan := range plans {
			require.Regexp(t, want[name], plan, "%s:\n%s", name, plan)
			require.NotContains(t, plan, "Seq Scan", "%s:\n%s", name, plan)
			require.NotRegexp(t, `(?m)^SCAN (watches|\w+ USING)`, plan, "%s:\n%s", name, plan)
		}
		require.NotContains(t, plans["due"], "TEMP B-TREE", "due watches come in index order")
		require.NotContains(t, plans["due"], "Sort", "due watches come in index order")
	})
}

// BenchmarkLiveWatches looks up the keys of one event among 100,000 live watches (and,
// to compare, 1,000: an index lookup costs about the same).
func BenchmarkLiveWatches(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		for _, be := range storetest.Backends(b) {
			b.Run(fmt.Sprintf("%s/watches=%d", be.Name, n), func(b *testing.B) {
				s := storetest.Open(b, be)
				seedWatches(b, s, n)
				ctx := context.Background()
				b.ReportAllocs()
				i, found := 0, 0
				for b.Loop() {
					got, err := store.NewWatches(s).LiveWatches(ctx, eventKeys((i*7919)%n))
					if err != nil {
						b.Fatal(err)
					}
					found += len(got)
					i++
				}
				b.ReportMetric(float64(found)/float64(i), "watches/op")
			})
		}
	}
}
