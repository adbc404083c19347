package connectors

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// MaxWatchResources bounds the resources one item is looked up by (an email's
// References can be long; the conversation's root and latest ids are kept).
const MaxWatchResources = 20

// WatchLookup finds the not-ended watches of keys (watch.Key); watch.Store has it.
type WatchLookup interface {
	LiveWatches(ctx context.Context, keys []string) ([]watch.Watch, error)
}

// WithWatches makes items reach the threads watching them (package watch), whether or
// not a route matches, and lets `watched: true` routes keep the threads that watch.
func WithWatches(w WatchLookup) PipelineOption { return func(p *Pipeline) { p.watches = w } }

// WithWatchResources says how each source's watch resources read (the kinds table's
// parsers): an item is looked up by its WatchResources in their canonical form, and an
// item of a source none of rs reads is a routing error, never silently unwatched.
func WithWatchResources(rs watch.Resources) RouterOption {
	return func(r *Router) { r.resources = rs }
}

// itemWatches is what watches do with one item.
type itemWatches struct {
	// hear are the watches the item reaches (live, baseline passed, kind wanted, agent
	// configured), the most specific resource first.
	hear []watch.Watch
	// end are the watches of the item's own resource it ends (Item.Ends, not Forever).
	end []watch.Watch
}

// before reports that something that happened at `at` happened before a watch created at
// created. GitHub's times and IMAP's INTERNALDATE have whole seconds: such a time is
// compared with the creation's second, or a comment posted in the second the watch was
// made would be lost (the price: one from earlier in that second counts).
func before(at, created time.Time) bool {
	if at.Nanosecond() == 0 {
		created = created.Truncate(time.Second)
	}
	return at.Before(created)
}

// watchKeys are the lookup keys of it's watch resources, canonical, in its order;
// own is the key of its first resource when that is not a whole one (what Ends ends).
// A resource its source's kind refuses names nothing; a source that cannot be watched
// at all is an error.
func (r *Router) watchKeys(it *Item) (keys []string, own string, err error) {
	src := it.Fields.Source
	if len(it.WatchResources) > 0 && !r.resources.Known(src) {
		return nil, "", fmt.Errorf("watches: source %q names watch resources but no integration kind reads them", src)
	}
	for i, res := range it.WatchResources[:min(len(it.WatchResources), MaxWatchResources)] {
		c, err := r.resources.Resource(src, res)
		if err != nil {
			continue
		}
		k := watch.Key(src, it.Fields.Connector, c.Canonical)
		if i == 0 && !c.Whole {
			own = k
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, own, nil
}

// matchWatches looks up, in one call for all items, the watches each item reaches or
// ends at receivedAt. Skipped items match nothing; an item whose source cannot be
// watched matches nothing and is one of errs.
func (r *Router) matchWatches(ctx context.Context, w WatchLookup, items []Item, receivedAt time.Time) (out []itemWatches, errs []error, err error) {
	out = make([]itemWatches, len(items))
	if w == nil {
		return out, nil, nil
	}
	keys := make([][]string, len(items))
	owns := make([]string, len(items))
	var ask []string
	for j := range items {
		if items[j].Skip != "" {
			continue
		}
		var kerr error
		if keys[j], owns[j], kerr = r.watchKeys(&items[j]); kerr != nil {
			errs = append(errs, kerr)
			continue
		}
		for _, k := range keys[j] {
			if !slices.Contains(ask, k) {
				ask = append(ask, k)
			}
		}
	}
	if len(ask) == 0 {
		return out, errs, nil
	}
	found, err := w.LiveWatches(ctx, ask)
	if err != nil {
		return nil, nil, fmt.Errorf("look up watches: %w", err)
	}
	for j := range items {
		it := &items[j]
		// The silent baseline: what happened before a watch was created is not its news
		// (a redelivered old event included).
		at := it.OccurredAt
		if at.IsZero() {
			at = receivedAt
		}
		var cands []watch.Watch
		for _, wt := range found {
			if !slices.Contains(keys[j], wt.Key()) || !wt.Live(receivedAt) || before(at, wt.CreatedAt) ||
				!slices.Contains(r.agents, wt.Thread.Agent) {
				continue
			}
			cands = append(cands, wt)
		}
		slices.SortStableFunc(cands, func(a, b watch.Watch) int {
			return cmp.Or(cmp.Compare(slices.Index(keys[j], a.Key()), slices.Index(keys[j], b.Key())),
				a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
		for _, wt := range cands {
			if wt.WantsKind(it.Kind) {
				out[j].hear = append(out[j].hear, wt)
			}
			// A terminal state ends the watch whatever kinds it hears: nothing more
			// will happen to the thing.
			if it.Ends != "" && owns[j] != "" && wt.Key() == owns[j] && !wt.Forever {
				out[j].end = append(out[j].end, wt)
			}
		}
	}
	return out, errs, nil
}

// watchOf is the watch among ws of thread k, if any.
func watchOf(ws []watch.Watch, k inbox.ThreadKey) (watch.Watch, bool) {
	i := slices.IndexFunc(ws, func(w watch.Watch) bool { return w.Thread == k })
	if i < 0 {
		return watch.Watch{}, false
	}
	return ws[i], true
}

// RouteWatched is RouteTraced with the watches of w (nil: none) at the event's
// receivedAt: a `watched: true` route keeps only a thread that watches the item; every
// watching thread no route feeds gets a record of route watch.Route; an item reaching
// its terminal state ends its resource's watches (a watch.Ended notification each,
// after the item's records).
func (r *Router) RouteWatched(ctx context.Context, w WatchLookup, payload any, items []Item, receivedAt time.Time) (Routing, error) {
	ws, errs, err := r.matchWatches(ctx, w, items, receivedAt)
	if err != nil {
		return Routing{}, err
	}
	rt := r.routeTraced(payload, items, ws)
	rt.Errs = append(rt.Errs, errs...)
	var ended []inbox.Notification
	for j := range items {
		var heard []inbox.ThreadKey
		for _, wt := range ws[j].hear {
			k := wt.Thread
			if slices.Contains(heard, k) {
				continue // one record per item and thread, however many of its watches match
			}
			heard = append(heard, k)
			tr := Trace{Route: watch.Route, Matched: true, Thread: &k, Watch: wt.ID}
			if by := routedBy(rt.Traces, j, k); by != "" {
				tr.SameThreadAs = by
			} else {
				rt.Notifications = append(rt.Notifications, watchNotification(&items[j], wt))
			}
			rt.Traces[j] = append(rt.Traces[j], tr)
		}
		for _, wt := range ws[j].end {
			if !slices.ContainsFunc(ended, func(n inbox.Notification) bool { return n.EndsWatch.ID == wt.ID }) {
				ended = append(ended, watch.Ended(wt, items[j].Ends))
			}
		}
	}
	rt.Notifications = append(rt.Notifications, ended...)
	return rt, nil
}

// routedBy names the route that makes item j a record of thread k ("" when none).
func routedBy(traces [][]Trace, j int, k inbox.ThreadKey) string {
	for _, tr := range traces[j] {
		if tr.Matched && tr.Err == nil && tr.Thread != nil && *tr.Thread == k {
			return cmp.Or(tr.SameThreadAs, tr.Route)
		}
	}
	return ""
}

// watchNotification is item it as a record of w's thread.
func watchNotification(it *Item, w watch.Watch) inbox.Notification {
	n := (&compiledRoute{cfg: RouteConfig{Name: watch.Route, Priority: w.Priority}}).notification(it, w.Thread)
	n.Attributes = n.Attributes.Set("watch", w.ID)
	if n.Metadata == nil {
		n.Metadata = map[string]any{}
	}
	n.Metadata["watch"] = w.ID
	return n
}
