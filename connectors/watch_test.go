package connectors_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

var (
	watchT0   = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) // watches are created
	receiveAt = watchT0.Add(2 * time.Hour)                   // events arrive
)

func newWatches(t *testing.T, ws ...watch.Watch) *watchtest.Memory {
	t.Helper()
	m := watchtest.NewMemory()
	for _, w := range ws {
		if w.CreatedAt.IsZero() {
			w.CreatedAt = watchT0
		}
		if w.ExpiresAt.IsZero() {
			w.ExpiresAt = watchT0.Add(24 * time.Hour)
		}
		_, _, err := m.CreateWatch(context.Background(), w, 100)
		require.NoError(t, err)
	}
	return m
}

func watchOn(id, thread, source, connector, resource string) watch.Watch {
	return watch.Watch{ID: id, Thread: inbox.ThreadKey{Agent: "coder", Resource: "w", Thread: thread},
		Source: source, Connector: connector, Resource: resource}
}

func routeWatched(t *testing.T, routes []connectors.RouteConfig, w connectors.WatchLookup, items ...connectors.Item) connectors.Routing {
	t.Helper()
	r, err := connectors.NewRouter(routes, []string{"coder"}, connectors.WithWatchResources(kindstest.Resources()))
	require.NoError(t, err)
	rt, err := r.RouteWatched(context.Background(), w, nil, items, receiveAt)
	require.NoError(t, err)
	return rt
}

func heard(ns []inbox.Notification) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Thread.Thread)
	}
	return out
}

// A Slack thread watch hears its replies (and its root message); a channel watch hears
// every message of the channel; another thread's watch hears nothing.
func TestSlackWatches(t *testing.T) {
	ws := newWatches(t,
		watchOn("w1", "thread", "slack", "acme", "C1/1700000000.000100"),
		watchOn("w2", "channel", "slack", "acme", "C1"),
		watchOn("w3", "other", "slack", "acme", "C1/1700000099.000100"),
		watchOn("w4", "elsewhere", "slack", "other-workspace", "C1"))
	reply := connectors.Item{Kind: "message", Fields: connectors.Fields{Source: "slack", Connector: "acme"},
		WatchResources: []string{"c1/1700000000.000100", "C1"}}
	rt := routeWatched(t, nil, ws, reply)
	assert.ElementsMatch(t, []string{"thread", "channel"}, heard(rt.Notifications))
}

// An email watch on a Message-ID hears the conversation that references it.
func TestEmailWatchHearsReferences(t *testing.T) {
	ws := newWatches(t, watchOn("w1", "customer", "email", "support", "root@acme.example"))
	answer := connectors.Item{Kind: "email", Fields: connectors.Fields{Source: "email", Connector: "support"},
		WatchResources: []string{"<third@customer.example>", "<second@acme.example>", "<root@acme.example>"}}
	unrelated := connectors.Item{Kind: "email", Fields: connectors.Fields{Source: "email", Connector: "support"},
		WatchResources: []string{"<new@customer.example>"}}
	rt := routeWatched(t, nil, ws, answer, unrelated)
	assert.Equal(t, []string{"customer"}, heard(rt.Notifications))
}

// A generic watch names a sourceId or a netKey.
func TestGenericWatches(t *testing.T) {
	ws := newWatches(t,
		watchOn("w1", "by-id", "generic", "billing", "invoice-9"),
		watchOn("w2", "by-key", "generic", "billing", "customer:42"))
	it := connectors.Item{Kind: "invoice-failed", SourceID: "invoice-9", NetKey: "customer:42",
		Fields: connectors.Fields{Source: "generic", Connector: "billing"}, WatchResources: []string{"invoice-9", "customer:42"}}
	rt := routeWatched(t, nil, ws, it)
	assert.ElementsMatch(t, []string{"by-id", "by-key"}, heard(rt.Notifications))
}

// Skipped items, threads of agents no longer configured and items older than the
// watch (OccurredAt before CreatedAt) match nothing; no OccurredAt: receivedAt counts.
func TestWatchMatchingRules(t *testing.T) {
	gone := watchOn("w2", "gone", "generic", "billing", "x")
	gone.Thread.Agent = "retired"
	ws := newWatches(t, watchOn("w1", "t", "generic", "billing", "x"), gone)
	item := func(mut func(*connectors.Item)) connectors.Item {
		it := connectors.Item{Kind: "k", Fields: connectors.Fields{Source: "generic", Connector: "billing"}, WatchResources: []string{"x"}}
		mut(&it)
		return it
	}
	assert.Empty(t, routeWatched(t, nil, ws, item(func(it *connectors.Item) { it.Skip = "bot" })).Notifications)
	assert.Empty(t, routeWatched(t, nil, ws, item(func(it *connectors.Item) { it.OccurredAt = watchT0.Add(-time.Second) })).Notifications)
	assert.Equal(t, []string{"t"}, heard(routeWatched(t, nil, ws, item(func(it *connectors.Item) { it.OccurredAt = watchT0 })).Notifications))
	assert.Equal(t, []string{"t"}, heard(routeWatched(t, nil, ws, item(func(*connectors.Item) {})).Notifications))
}

// lookups counts LiveWatches calls and the keys asked.
type lookups struct {
	*watchtest.Memory
	calls int
	keys  []string
}

func (l *lookups) LiveWatches(ctx context.Context, keys []string) ([]watch.Watch, error) {
	l.calls++
	l.keys = append(l.keys, keys...)
	return l.Memory.LiveWatches(ctx, keys)
}

// One event's items are looked up in one call, each key once, and an email's long
// References at most MaxWatchResources of them.
func TestWatchLookupIsOneCall(t *testing.T) {
	l := &lookups{Memory: newWatches(t)}
	var refs []string
	for i := range 50 {
		refs = append(refs, "m"+string(rune('a'+i%26))+string(rune('a'+i/26))+"@x")
	}
	a := connectors.Item{Kind: "email", Fields: connectors.Fields{Source: "email", Connector: "s"}, WatchResources: refs}
	b := a
	routeWatched(t, nil, l, a, b)
	assert.Equal(t, 1, l.calls)
	assert.Len(t, l.keys, connectors.MaxWatchResources)
}

// routes[].watched: true keeps a route to the threads that watch the item; explain's
// trace names the watch that admitted it, or that none did.
func TestWatchedRoute(t *testing.T) {
	routes := []connectors.RouteConfig{{
		Name: "watched-prs", Watched: true, Match: connectors.RouteMatch{Source: inbox.StringList{"github"}},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "w", Thread: "pr-{{.Number}}"},
	}}
	w := watchOn("w7", "pr-7", "github", "acme", "acme/api#7")
	w.Kinds = []string{"comment"}
	ws := newWatches(t, w)
	item := func(n int, kind string) connectors.Item {
		return connectors.Item{Kind: kind, Fields: connectors.Fields{Source: "github", Connector: "acme", Repo: "acme/api", Number: n},
			WatchResources: []string{"acme/api#" + string(rune('0'+n)), "acme/api"}}
	}
	rt := routeWatched(t, routes, ws, item(7, "comment"))
	require.Len(t, rt.Notifications, 1)
	assert.Equal(t, "watched-prs", rt.Notifications[0].Route, "the route's record, not a second one of the watch")
	require.Len(t, rt.Traces[0], 2)
	assert.Equal(t, connectors.Trace{Route: "watched-prs", Matched: true, Thread: &w.Thread, Watch: "w7"}, rt.Traces[0][0])
	assert.Equal(t, connectors.Trace{Route: watch.Route, Matched: true, Thread: &w.Thread, Watch: "w7", SameThreadAs: "watched-prs"}, rt.Traces[0][1])

	for _, it := range []connectors.Item{item(8, "comment"), item(7, "pr-pushed")} {
		rt = routeWatched(t, routes, ws, it)
		assert.Empty(t, rt.Notifications, "unwatched thread or kind")
		assert.True(t, rt.Traces[0][0].Unwatched)
		assert.False(t, rt.Traces[0][0].Matched)
	}
	// Without watches at all, a watched route keeps nothing.
	r, err := connectors.NewRouter(routes, []string{"coder"})
	require.NoError(t, err)
	assert.Empty(t, r.RouteTraced(nil, []connectors.Item{item(7, "comment")}).Notifications)
}

// Through the pipeline: a watched item with no route is stored routed with its record;
// an event without receivedAt is dated by the pipeline's clock (an expired watch is not
// live then).
func TestPipelineRoutesWatches(t *testing.T) {
	ws := newWatches(t, watchOn("w1", "t", "generic", "billing", "x"))
	r, err := connectors.NewRouter(nil, []string{"coder"}, connectors.WithWatchResources(kindstest.Resources()))
	require.NoError(t, err)
	ing := &recordingIngester{}
	late := func() time.Time { return watchT0.Add(25 * time.Hour) }
	p := connectors.NewPipeline(r, ing, nil, connectors.WithWatches(ws), connectors.WithClock(late))
	it := connectors.Item{Kind: "k", Fields: connectors.Fields{Source: "generic", Connector: "billing"}, WatchResources: []string{"x"}}
	out, err := p.Ingest(context.Background(), &inbox.Event{Source: "generic", Connector: "billing", ReceivedAt: receiveAt}, []connectors.Item{it})
	require.NoError(t, err)
	assert.Equal(t, inbox.EventRouted, out.Status)
	assert.Len(t, ing.ns, 1)
	out, err = p.Ingest(context.Background(), &inbox.Event{Source: "generic", Connector: "billing"}, []connectors.Item{it})
	require.NoError(t, err)
	assert.Equal(t, inbox.EventUnrouted, out.Status, "the watch expired by the pipeline's clock")
}

type recordingIngester struct{ ns []inbox.Notification }

func (r *recordingIngester) Ingest(_ context.Context, _ *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	r.ns = ns
	return inbox.IngestResult{EventID: "ev"}, nil
}

// An item of a source no kind reads watch resources of is an error of its routing
// (stored on the event, logged), never silently unwatched; one that names no watch
// resources looks nothing up.
func TestUnknownWatchSourceIsAnError(t *testing.T) {
	ws := newWatches(t, watchOn("w1", "t", "jira", "acme", "PROJ-1"))
	jira := connectors.Item{Kind: "issue", Fields: connectors.Fields{Source: "jira", Connector: "acme"}, WatchResources: []string{"PROJ-1"}}
	rt := routeWatched(t, nil, ws, jira)
	require.Len(t, rt.Errs, 1)
	assert.EqualError(t, rt.Errs[0], `watches: source "jira" names watch resources but no integration kind reads them`)
	assert.Empty(t, rt.Notifications)

	r, err := connectors.NewRouter(nil, []string{"coder"})
	require.NoError(t, err)
	rt, err = r.RouteWatched(context.Background(), nil, nil, []connectors.Item{jira}, receiveAt)
	require.NoError(t, err)
	assert.Empty(t, rt.Errs, "without watches nothing is looked up")
	jira.WatchResources = nil
	assert.Empty(t, routeWatched(t, nil, ws, jira).Errs, "nothing to look up")
}
