// Package watchtest has an in-memory watch.Store for tests of the packages that use
// watches, and the conformance suite every watch.Store passes.
package watchtest

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// Memory is a watch.Store in memory.
type Memory struct {
	mu      sync.Mutex
	watches []watch.Watch // in creation order
}

var _ watch.Store = (*Memory)(nil)

// NewMemory is an empty store.
func NewMemory() *Memory { return &Memory{} }

func (m *Memory) CreateWatch(_ context.Context, w watch.Watch, maxPerAgent int) (watch.Watch, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := 0
	for _, o := range m.watches {
		if o.EndedAt != nil || o.Thread.Agent != w.Thread.Agent {
			continue
		}
		if o.Thread == w.Thread && o.Key() == w.Key() {
			return clone(o), false, nil
		}
		live++
	}
	if live >= maxPerAgent {
		return watch.Watch{}, false, watch.ErrTooMany
	}
	m.watches = append(m.watches, clone(w))
	return clone(w), true, nil
}

func (m *Memory) Watch(_ context.Context, id string) (watch.Watch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.watches {
		if w.ID == id {
			return clone(w), nil
		}
	}
	return watch.Watch{}, inbox.ErrNotFound
}

func (m *Memory) ListWatches(_ context.Context, f watch.Filter) (watch.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 500
	}
	var out []watch.Watch
	for i := len(m.watches) - 1; i >= 0; i-- {
		w := m.watches[i]
		if !selects(f, w) || (f.Cursor != "" && w.ID >= f.Cursor) {
			continue
		}
		out = append(out, clone(w))
	}
	slices.SortStableFunc(out, func(a, b watch.Watch) int { return cmp.Compare(b.ID, a.ID) })
	page := watch.Page{Watches: out}
	if len(out) > limit {
		page.Watches = out[:limit]
		page.Next = out[limit-1].ID
	}
	return page, nil
}

func selects(f watch.Filter, w watch.Watch) bool {
	switch {
	case f.Thread != nil && *f.Thread != w.Thread,
		f.Agent != "" && f.Agent != w.Thread.Agent,
		f.Source != "" && f.Source != w.Source,
		f.Connector != "" && f.Connector != w.Connector,
		f.Resource != "" && f.Resource != w.Resource,
		f.Status == watch.StatusLive && w.EndedAt != nil,
		f.Status == watch.StatusEnded && w.EndedAt == nil:
		return false
	}
	return true
}

func (m *Memory) EndWatch(_ context.Context, id, reason string, now time.Time) (watch.Watch, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.watches {
		w := &m.watches[i]
		if w.ID != id {
			continue
		}
		if w.EndedAt != nil {
			return clone(*w), false, nil
		}
		t := now.UTC()
		w.EndedAt, w.EndReason = &t, reason
		return clone(*w), true, nil
	}
	return watch.Watch{}, false, inbox.ErrNotFound
}

func (m *Memory) LiveWatches(_ context.Context, keys []string) ([]watch.Watch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []watch.Watch
	for _, w := range m.watches {
		if w.EndedAt == nil && slices.Contains(keys, w.Key()) {
			out = append(out, clone(w))
		}
	}
	return out, nil
}

func (m *Memory) DueWatches(_ context.Context, now time.Time, limit int) ([]watch.Watch, error) {
	if limit <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []watch.Watch
	for _, w := range m.watches {
		if w.EndedAt == nil && !w.ExpiresAt.After(now) {
			out = append(out, clone(w))
		}
	}
	slices.SortStableFunc(out, func(a, b watch.Watch) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// End applies an inbox.WatchEnd as a store's ingest does: it reports whether the watch
// was live (the notification announcing it is then kept).
func (m *Memory) End(e inbox.WatchEnd, now time.Time) bool {
	_, ended, err := m.EndWatch(context.Background(), e.ID, e.Reason, now)
	return err == nil && ended
}

func clone(w watch.Watch) watch.Watch {
	w.Kinds = slices.Clone(w.Kinds)
	if w.EndedAt != nil {
		t := *w.EndedAt
		w.EndedAt = &t
	}
	return w
}
