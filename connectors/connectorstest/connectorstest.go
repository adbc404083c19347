// Package connectorstest has the test doubles the connector packages share and the
// conformance suites connectors run: Exercise (every HTTP connector), ExerciseMail,
// and ExerciseSamples (providers' documented deliveries through a real gateway and
// store).
package connectorstest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/signalgate/signalgate/inbox"
)

// Ingested is one call the fake accepted.
type Ingested struct {
	Event         inbox.Event
	Notifications []inbox.Notification
	Duplicate     bool
}

// Ingester is an in-memory connectors.Ingester: it refuses notifications the inbox
// would refuse (Notification.Validate), assigns event ids and reports a repeated
// (source, connector, delivery id) as a duplicate, as the inbox does.
type Ingester struct {
	mu    sync.Mutex
	seen  map[string]string
	calls []Ingested
	// Err, when set, is returned by every Ingest.
	Err error
}

// NewIngester returns an empty fake.
func NewIngester() *Ingester { return &Ingester{seen: map[string]string{}} }

// Ingest records the call.
func (f *Ingester) Ingest(_ context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Err != nil {
		return inbox.IngestResult{}, f.Err
	}
	for i := range ns {
		if err := ns[i].Validate(); err != nil {
			return inbox.IngestResult{}, fmt.Errorf("notification %d: %w", i, err)
		}
	}
	key := ev.Source + "\x00" + ev.Connector + "\x00" + ev.DeliveryID
	if id, ok := f.seen[key]; ok && ev.DeliveryID != "" {
		f.calls = append(f.calls, Ingested{Event: *ev, Notifications: slices.Clone(ns), Duplicate: true})
		return inbox.IngestResult{EventID: id, Duplicate: true}, nil
	}
	if ev.ID == "" {
		ev.ID = fmt.Sprintf("ev-%d", len(f.calls)+1)
	}
	f.seen[key] = ev.ID
	res := inbox.IngestResult{EventID: ev.ID}
	for i, n := range ns {
		res.Records = append(res.Records, inbox.RecordOutcome{RecordID: fmt.Sprintf("%s-r%d", ev.ID, i), Thread: n.Thread})
	}
	f.calls = append(f.calls, Ingested{Event: *ev, Notifications: slices.Clone(ns)})
	return res, nil
}

// Calls returns every call so far.
func (f *Ingester) Calls() []Ingested {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Last returns the most recent call; ok is false when there was none.
func (f *Ingester) Last() (Ingested, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return Ingested{}, false
	}
	return f.calls[len(f.calls)-1], true
}
