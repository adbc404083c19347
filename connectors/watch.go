package connectors

import (
	"context"
	"fmt"
	"slices"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// WatchRoute is the route name of a record a conversation watch made (policy rules may
// match it).
const WatchRoute = "watch"

// Watchers looks up conversation watches (the store): the threads watching each place
// key (reply.To.WatchKey).
type Watchers interface {
	Watchers(ctx context.Context, keys []string) (map[string][]inbox.ThreadKey, error)
}

// WithWatchers makes items of a watched conversation (a reply sent with watch: true)
// records of the watching threads too, whether or not a route matches them.
func WithWatchers(w Watchers) PipelineOption { return func(p *Pipeline) { p.watchers = w } }

// Watched lists, per item, the threads that watch its conversation (its metadata's
// replyTo) and that no route of the item feeds already: one record per item and thread.
// A thread of an agent no longer configured is left out.
func (r *Router) Watched(ctx context.Context, w Watchers, items []Item, traces [][]Trace) ([][]inbox.ThreadKey, error) {
	out := make([][]inbox.ThreadKey, len(items))
	keys := make([]string, len(items))
	var ask []string
	for j, it := range items {
		if it.Skip != "" {
			continue
		}
		to, ok := reply.FromMetadata(it.Metadata)
		if !ok {
			continue
		}
		if keys[j], ok = to.WatchKey(); ok && !slices.Contains(ask, keys[j]) {
			ask = append(ask, keys[j])
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	found, err := w.Watchers(ctx, ask)
	if err != nil {
		return nil, fmt.Errorf("look up conversation watches: %w", err)
	}
	for j := range items {
		for _, k := range found[keys[j]] {
			if keys[j] == "" || !slices.Contains(r.agents, k.Agent) || routedTo(traces, j, k) || slices.Contains(out[j], k) {
				continue
			}
			out[j] = append(out[j], k)
		}
	}
	return out, nil
}

// routedTo reports that a route makes item j a record of thread k.
func routedTo(traces [][]Trace, j int, k inbox.ThreadKey) bool {
	if j >= len(traces) {
		return false
	}
	for _, tr := range traces[j] {
		if tr.Matched && tr.Err == nil && tr.Thread != nil && *tr.Thread == k {
			return true
		}
	}
	return false
}

// watchNotification is item it as a record of watching thread k.
func watchNotification(it *Item, k inbox.ThreadKey) inbox.Notification {
	return (&compiledRoute{cfg: RouteConfig{Name: WatchRoute}}).notification(it, k)
}

// AddWatched adds to rt the records of watching threads: a notification per item and
// watching thread, and a trace of route WatchRoute (explain shows it).
func (r *Router) AddWatched(ctx context.Context, w Watchers, items []Item, rt *Routing) error {
	watched, err := r.Watched(ctx, w, items, rt.Traces)
	if err != nil {
		return err
	}
	for j, ks := range watched {
		for _, k := range ks {
			rt.Notifications = append(rt.Notifications, watchNotification(&items[j], k))
			if j < len(rt.Traces) {
				rt.Traces[j] = append(rt.Traces[j], Trace{Route: WatchRoute, Matched: true, Thread: &k})
			}
		}
	}
	return nil
}
