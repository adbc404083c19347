package watchtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// T0 is the suite's clock: whole microseconds in UTC, what every store keeps exactly.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Run is the conformance suite of a watch.Store: open answers a new, empty store.
func Run(t *testing.T, open func(t *testing.T) watch.Store) {
	t.Run("CreateAndRead", func(t *testing.T) { createAndRead(t, open(t)) })
	t.Run("CreateIsIdempotentPerThreadAndKey", func(t *testing.T) { idempotent(t, open(t)) })
	t.Run("CapPerAgent", func(t *testing.T) { capPerAgent(t, open(t)) })
	t.Run("CapUnderConcurrentCreates", func(t *testing.T) { capConcurrent(t, open(t)) })
	t.Run("ListFiltersAndPages", func(t *testing.T) { list(t, open(t)) })
	t.Run("EndOnce", func(t *testing.T) { endOnce(t, open(t)) })
	t.Run("LiveWatches", func(t *testing.T) { live(t, open(t)) })
	t.Run("DueWatches", func(t *testing.T) { due(t, open(t)) })
}

// ids hands out increasing ids, as watch.NewID does over time.
type ids struct{ n atomic.Int64 }

func (g *ids) next() string { return fmt.Sprintf("w-%06d", g.n.Add(1)) }

// newWatch is a live watch of a GitHub pull request by a thread of agent.
func newWatch(id, agent, thread, resource string) watch.Watch {
	return watch.Watch{ID: id, Thread: inbox.ThreadKey{Agent: agent, Resource: "res", Thread: thread},
		Source: "github", Connector: "gh", Resource: resource, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}
}

func create(t *testing.T, s watch.Store, w watch.Watch, maxPerAgent int) watch.Watch {
	t.Helper()
	got, created, err := s.CreateWatch(context.Background(), w, maxPerAgent)
	require.NoError(t, err)
	require.True(t, created, "watch %s", w.ID)
	return got
}

func idsOf(ws []watch.Watch) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}

func createAndRead(t *testing.T, s watch.Store) {
	ctx := context.Background()
	w := newWatch("w-1", "a", "t", "acme/api#7")
	w.Kinds, w.Priority, w.Forever, w.ReplyID = []string{"pr.*", "comment"}, inbox.PriorityHigh, true, "r-1"
	got, created, err := s.CreateWatch(ctx, w, 10)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, w, got, "every field kept")
	read, err := s.Watch(ctx, "w-1")
	require.NoError(t, err)
	require.Equal(t, w, read)

	bare := newWatch("w-2", "a", "t", "acme/api#8")
	create(t, s, bare, 10)
	read, err = s.Watch(ctx, "w-2")
	require.NoError(t, err)
	require.Equal(t, bare, read, "no kinds stays no kinds")

	_, err = s.Watch(ctx, "w-unknown")
	require.ErrorIs(t, err, inbox.ErrNotFound)
}

func idempotent(t *testing.T, s watch.Store) {
	ctx := context.Background()
	first := create(t, s, newWatch("w-1", "a", "t", "acme/api#7"), 10)
	again := newWatch("w-2", "a", "t", "acme/api#7")
	again.Kinds = []string{"comment"}
	got, created, err := s.CreateWatch(ctx, again, 10)
	require.NoError(t, err)
	require.False(t, created, "the thread watches that key already")
	require.Equal(t, first, got, "the existing watch, as it is")
	_, err = s.Watch(ctx, "w-2")
	require.ErrorIs(t, err, inbox.ErrNotFound, "nothing inserted")

	create(t, s, newWatch("w-3", "a", "other", "acme/api#7"), 10) // another thread
	create(t, s, newWatch("w-4", "a", "t", "acme/api#8"), 10)     // another resource
	otherConnector := newWatch("w-5", "a", "t", "acme/api#7")
	otherConnector.Connector = "gh2"
	create(t, s, otherConnector, 10)

	_, ended, err := s.EndWatch(ctx, "w-1", watch.EndDeleted, T0)
	require.NoError(t, err)
	require.True(t, ended)
	got = create(t, s, newWatch("w-6", "a", "t", "acme/api#7"), 10)
	require.Equal(t, "w-6", got.ID, "an ended watch does not hold the key")

	// Concurrent creates of one thread and key: one watch.
	var g ids
	var wg sync.WaitGroup
	var made atomic.Int32
	gotIDs := make([]string, 8)
	for i := range gotIDs {
		wg.Go(func() {
			w, created, err := s.CreateWatch(ctx, newWatch("w-c"+g.next(), "a", "t", "acme/api#9"), 10)
			if !assert.NoError(t, err) {
				return
			}
			if created {
				made.Add(1)
			}
			gotIDs[i] = w.ID
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, made.Load(), "exactly one create inserted")
	require.Len(t, slices.Compact(gotIDs), 1, "every create answered that watch: %v", gotIDs)
}

func capPerAgent(t *testing.T, s watch.Store) {
	ctx := context.Background()
	for i := range 3 {
		create(t, s, newWatch(fmt.Sprintf("w-%d", i), "a", fmt.Sprintf("t%d", i), "acme/api#7"), 3)
	}
	_, _, err := s.CreateWatch(ctx, newWatch("w-over", "a", "t9", "acme/api#7"), 3)
	require.ErrorIs(t, err, watch.ErrTooMany)
	_, err = s.Watch(ctx, "w-over")
	require.ErrorIs(t, err, inbox.ErrNotFound)

	got, created, err := s.CreateWatch(ctx, newWatch("w-again", "a", "t0", "acme/api#7"), 3)
	require.NoError(t, err, "asking again for a watch the agent holds is no new watch")
	require.False(t, created)
	require.Equal(t, "w-0", got.ID)

	create(t, s, newWatch("w-b", "b", "t0", "acme/api#7"), 3) // another agent's count

	_, ended, err := s.EndWatch(ctx, "w-1", watch.EndExpired, T0)
	require.NoError(t, err)
	require.True(t, ended)
	create(t, s, newWatch("w-3", "a", "t9", "acme/api#7"), 3) // an ended watch frees its place
}

func capConcurrent(t *testing.T, s watch.Store) {
	ctx := context.Background()
	// Several bursts, one agent each: an unserialised count-then-insert overshoots in
	// most bursts, so it cannot pass them all by luck.
	const limit, tries, bursts = 4, 48, 5
	var g ids
	for burst := range bursts {
		agent := fmt.Sprintf("a%d", burst)
		var wg sync.WaitGroup
		var made, refused atomic.Int32
		start := make(chan struct{})
		for i := range tries {
			wg.Go(func() {
				<-start
				_, created, err := s.CreateWatch(ctx, newWatch(g.next(), agent, fmt.Sprintf("t%d", i), "acme/api#7"), limit)
				switch {
				case errors.Is(err, watch.ErrTooMany):
					refused.Add(1)
				case assert.NoError(t, err) && assert.True(t, created):
					made.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		require.EqualValues(t, limit, made.Load(), "burst %d: the cap holds whatever the interleaving", burst)
		require.EqualValues(t, tries-limit, refused.Load())
		page, err := s.ListWatches(ctx, watch.Filter{Agent: agent, Status: watch.StatusLive})
		require.NoError(t, err)
		require.Len(t, page.Watches, limit)
	}
}

func list(t *testing.T, s watch.Store) {
	ctx := context.Background()
	pr := func(id, agent, thread, resource, connector string) {
		w := newWatch(id, agent, thread, resource)
		w.Connector = connector
		create(t, s, w, 100)
	}
	pr("w-1", "a", "t1", "acme/api#1", "gh")
	pr("w-2", "a", "t1", "acme/api#2", "gh")
	pr("w-3", "a", "t2", "acme/api#1", "gh2")
	pr("w-4", "b", "t1", "acme/api#1", "gh")
	slack := newWatch("w-5", "b", "t3", "C123/1712345678.000100")
	slack.Source, slack.Connector = "slack", "sl"
	create(t, s, slack, 100)
	_, _, err := s.EndWatch(ctx, "w-2", watch.EndMerged, T0)
	require.NoError(t, err)

	t1 := inbox.ThreadKey{Agent: "a", Resource: "res", Thread: "t1"}
	for _, c := range []struct {
		name string
		f    watch.Filter
		want []string
	}{
		{"all, newest first", watch.Filter{}, []string{"w-5", "w-4", "w-3", "w-2", "w-1"}},
		{"thread", watch.Filter{Thread: &t1}, []string{"w-2", "w-1"}},
		{"agent", watch.Filter{Agent: "a"}, []string{"w-3", "w-2", "w-1"}},
		{"source", watch.Filter{Source: "slack"}, []string{"w-5"}},
		{"connector", watch.Filter{Connector: "gh2"}, []string{"w-3"}},
		{"resource", watch.Filter{Resource: "acme/api#1"}, []string{"w-4", "w-3", "w-1"}},
		{"live", watch.Filter{Status: watch.StatusLive}, []string{"w-5", "w-4", "w-3", "w-1"}},
		{"ended", watch.Filter{Status: watch.StatusEnded}, []string{"w-2"}},
		{"combined", watch.Filter{Agent: "a", Resource: "acme/api#1", Connector: "gh"}, []string{"w-1"}},
		{"none", watch.Filter{Agent: "nobody"}, []string{}},
	} {
		page, err := s.ListWatches(ctx, c.f)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, idsOf(page.Watches), c.name)
		require.Empty(t, page.Next, c.name)
	}

	var got []string
	f := watch.Filter{Limit: 2}
	for range 5 {
		page, err := s.ListWatches(ctx, f)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Watches), 2)
		got = append(got, idsOf(page.Watches)...)
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	require.Equal(t, []string{"w-5", "w-4", "w-3", "w-2", "w-1"}, got, "pages cover every watch once, in order")

	page, err := s.ListWatches(ctx, watch.Filter{Limit: 5})
	require.NoError(t, err)
	require.Len(t, page.Watches, 5)
	require.Empty(t, page.Next, "a page holding the last watch has no next")
}

func endOnce(t *testing.T, s watch.Store) {
	ctx := context.Background()
	w := create(t, s, newWatch("w-1", "a", "t", "acme/api#7"), 10)
	at := T0.Add(time.Minute)
	got, ended, err := s.EndWatch(ctx, "w-1", watch.EndMerged, at)
	require.NoError(t, err)
	require.True(t, ended)
	w.EndedAt, w.EndReason = &at, watch.EndMerged
	require.Equal(t, w, got)

	got, ended, err = s.EndWatch(ctx, "w-1", watch.EndExpired, at.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, ended, "an ended watch ends once")
	require.Equal(t, w, got, "the first end stands")
	read, err := s.Watch(ctx, "w-1")
	require.NoError(t, err)
	require.Equal(t, w, read)

	_, _, err = s.EndWatch(ctx, "w-unknown", watch.EndDeleted, at)
	require.ErrorIs(t, err, inbox.ErrNotFound)

	// Concurrent ends: one of them ended it.
	create(t, s, newWatch("w-2", "a", "t", "acme/api#8"), 10)
	var wg sync.WaitGroup
	var n atomic.Int32
	for _, reason := range []string{watch.EndExpired, watch.EndClosed, watch.EndDeleted, watch.EndOperator} {
		wg.Go(func() {
			_, ended, err := s.EndWatch(ctx, "w-2", reason, at)
			if assert.NoError(t, err) && ended {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, n.Load())
}

func live(t *testing.T, s watch.Store) {
	ctx := context.Background()
	a := create(t, s, newWatch("w-1", "a", "t1", "acme/api#7"), 10)
	b := create(t, s, newWatch("w-2", "b", "t1", "acme/api#7"), 10)
	c := create(t, s, newWatch("w-3", "a", "t1", "acme/api"), 10)
	expired := newWatch("w-4", "a", "t2", "acme/api#7")
	expired.ExpiresAt = T0.Add(-time.Hour)
	expired = create(t, s, expired, 10)
	create(t, s, newWatch("w-5", "a", "t3", "acme/api#7"), 10)
	_, _, err := s.EndWatch(ctx, "w-5", watch.EndClosed, T0)
	require.NoError(t, err)
	create(t, s, newWatch("w-6", "a", "t1", "acme/other#1"), 10)

	key := watch.Key("github", "gh", "acme/api#7")
	repo := watch.Key("github", "gh", "acme/api")
	got, err := s.LiveWatches(ctx, []string{key, repo, key, watch.Key("github", "other", "acme/api#7")})
	require.NoError(t, err)
	require.ElementsMatch(t, []watch.Watch{a, b, c, expired}, got,
		"the key's and the repository's, expired ones too (the caller's clock decides), ended ones not, each once")

	got, err = s.LiveWatches(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, got)

	// More keys than one lookup takes.
	keys := make([]string, 0, 1201)
	for i := range 1200 {
		keys = append(keys, watch.Key("github", "gh", fmt.Sprintf("acme/none#%d", i)))
	}
	keys = append(keys, key)
	got, err = s.LiveWatches(ctx, keys)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"w-1", "w-2", "w-4"}, idsOf(got))
}

func due(t *testing.T, s watch.Store) {
	ctx := context.Background()
	for i, mins := range []int{30, 10, 20, 90, 10, 5} {
		w := newWatch(fmt.Sprintf("w-%d", i+1), "a", fmt.Sprintf("t%d", i), "acme/api#7")
		w.ExpiresAt = T0.Add(time.Duration(mins) * time.Minute)
		create(t, s, w, 10)
	}
	_, _, err := s.EndWatch(ctx, "w-6", watch.EndDeleted, T0)
	require.NoError(t, err)
	now := T0.Add(30 * time.Minute)
	got, err := s.DueWatches(ctx, now, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"w-2", "w-5", "w-3", "w-1"}, idsOf(got), "at or before now, soonest first, ended ones not")
	got, err = s.DueWatches(ctx, now, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"w-2", "w-5"}, idsOf(got))
	for _, limit := range []int{0, -1} {
		got, err = s.DueWatches(ctx, now, limit)
		require.NoError(t, err)
		require.Empty(t, got, "limit %d", limit)
	}
	got, err = s.DueWatches(ctx, T0, 10)
	require.NoError(t, err)
	require.Empty(t, got)
}
