package load

import (
	"hash/fnv"
	"regexp"
	"slices"
	"sync"
	"time"
)

// tracker matches frames to the events that caused them. Only events to subscribed
// threads are tracked: those are the ones a subscriber can see.
type tracker struct {
	markerRE *regexp.Regexp

	mu        sync.Mutex
	sentAt    map[string]time.Time // marker → first send
	acked     map[string]bool      // marker → answered 2xx
	arrived   map[string]string    // marker → the signal id that carried it first
	missing   int                  // acked, not yet arrived
	contents  map[string]uint64    // signal id → hash of its contents
	frames    []int                // signal frames per thread index
	e2e       []time.Duration
	dupMarker int // a marker carried by two different signal ids
	dupFrame  int // a subscriber got the same signal id twice
	conflicts int // one signal id with two different contents
	drained   chan struct{}
	sending   bool
	keep      bool
	seen      map[int]map[string]bool // thread index → signal ids (when keep)
}

func newTracker(runID string, threads int, keep bool) *tracker {
	return &tracker{
		markerRE: regexp.MustCompile(`lg` + regexp.QuoteMeta(runID) + `x[0-9]+z`),
		sentAt:   map[string]time.Time{}, acked: map[string]bool{}, arrived: map[string]string{},
		contents: map[string]uint64{}, frames: make([]int, threads), drained: make(chan struct{}, 1),
		sending: true, keep: keep, seen: map[int]map[string]bool{},
	}
}

func (t *tracker) sent(marker string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.sentAt[marker]; !ok {
		t.sentAt[marker] = at
	}
}

func (t *tracker) ack(marker string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.acked[marker] {
		return
	}
	t.acked[marker] = true
	if _, ok := t.arrived[marker]; !ok {
		t.missing++
	}
}

// doneSending lets the drain finish as soon as nothing acked is missing.
func (t *tracker) doneSending() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sending = false
	t.signalIfDrained()
}

func (t *tracker) signalIfDrained() {
	if !t.sending && t.missing == 0 {
		select {
		case t.drained <- struct{}{}:
		default:
		}
	}
}

// frame records one signal frame a subscriber of thread ti received; perSub is that
// subscriber's set of signal ids.
func (t *tracker) frame(ti int, id, contents string, at time.Time, perSub map[string]bool) {
	h := fnv.New64a()
	h.Write([]byte(contents))
	sum := h.Sum64()
	markers := t.markerRE.FindAllString(contents, -1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if perSub[id] {
		t.dupFrame++
		return
	}
	perSub[id] = true
	if t.keep {
		if t.seen[ti] == nil {
			t.seen[ti] = map[string]bool{}
		}
		t.seen[ti][id] = true
	}
	if prev, ok := t.contents[id]; ok && prev != sum {
		t.conflicts++
	}
	t.contents[id] = sum
	t.frames[ti]++
	for _, m := range markers {
		if first, ok := t.arrived[m]; ok {
			if first != id {
				t.dupMarker++
			}
			continue
		}
		t.arrived[m] = id
		if s, ok := t.sentAt[m]; ok {
			t.e2e = append(t.e2e, at.Sub(s))
		}
		if t.acked[m] {
			t.missing--
		}
	}
	t.signalIfDrained()
}

func (t *tracker) lost() (n int, examples []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for m := range t.acked {
		if _, ok := t.arrived[m]; !ok {
			n++
			if len(examples) < 10 {
				examples = append(examples, m)
			}
		}
	}
	slices.Sort(examples)
	return n, examples
}
