package delivery

import "time"

// table is the dispatcher's config-derived state: the routes by agent id, their
// concurrency slots and the policy's summary settings.
type table struct {
	routes   map[string]Route
	slots    map[string]chan struct{} // per-route concurrency, by agent id
	interval time.Duration
	detailed bool
	secrets  []string
	options  StreamOptionsPolicy // nil: no policy stream options
}

// newTable builds the table of routes with settings s; prev, when set, is the table it
// replaces: a route whose concurrency is unchanged keeps its slots, so the sends in
// flight still count against the bound.
func newTable(routes map[string]Route, s table, prev *table) *table {
	s.routes = make(map[string]Route, len(routes))
	s.slots = map[string]chan struct{}{}
	for id, r := range routes {
		s.routes[id] = r.withDefaults()
		if r.Concurrency <= 0 {
			continue
		}
		if old, ok := prev.slot(id); ok && cap(old) == r.Concurrency {
			s.slots[id] = old
			continue
		}
		s.slots[id] = make(chan struct{}, r.Concurrency)
	}
	return &s
}

func (t *table) slot(id string) (chan struct{}, bool) {
	if t == nil {
		return nil, false
	}
	c, ok := t.slots[id]
	return c, ok
}

// Live is what a config reload changes in a running dispatcher.
type Live struct {
	Routes            map[string]Route
	SummaryInterval   time.Duration
	DetailedSummaries bool
	// Secrets are redacted from stored errors.
	Secrets       []string
	StreamOptions StreamOptionsPolicy
}

// Reconfigure swaps the routes and the policy's settings while the dispatcher runs:
// passes that began keep the table they read (their sends finish on the old targets),
// the next pass reads the new one. Nothing is stopped, so nothing in flight is lost.
func (d *Dispatcher) Reconfigure(l Live) {
	iv := l.SummaryInterval
	if iv <= 0 {
		iv = d.initial.interval
	}
	s := table{interval: iv, detailed: l.DetailedSummaries, secrets: l.Secrets, options: l.StreamOptions}
	d.live.Store(newTable(l.Routes, s, d.live.Load()))
}
