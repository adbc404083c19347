package agent

import (
	"context"
	"sync"

	"github.com/signalgate/signalgate/inbox"
)

// Publisher is told, after commit, that a thread's log has new frames.
type Publisher interface {
	Publish(k inbox.ThreadKey)
}

// Subscriber hands out wake-up channels per thread. A token on the channel means "read the
// log again"; the frames themselves always come from the log, so ordering, resume and
// dedupe never depend on the broker. The channel is closed when the broker stops.
type Subscriber interface {
	Subscribe(k inbox.ThreadKey) (<-chan struct{}, func())
}

// Broker fans thread changes out to stream subscribers. LocalBroker serves one process; a
// PostgreSQL LISTEN/NOTIFY broker can implement the same for several replicas.
type Broker interface {
	Publisher
	Subscriber
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// LocalBroker is the in-process Broker.
type LocalBroker struct {
	mu      sync.Mutex
	subs    map[inbox.ThreadKey]map[chan struct{}]struct{}
	stopped bool
}

var _ Broker = (*LocalBroker)(nil)

// NewLocalBroker returns a running in-process broker.
func NewLocalBroker() *LocalBroker {
	return &LocalBroker{subs: map[inbox.ThreadKey]map[chan struct{}]struct{}{}}
}

// Name names the broker in start and stop errors.
func (b *LocalBroker) Name() string { return "stream broker" }

// Start is a no-op: the local broker needs no goroutine.
func (b *LocalBroker) Start(context.Context) error { return nil }

// Stop closes every subscription, which ends the streams reading them.
func (b *LocalBroker) Stop(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil
	}
	b.stopped = true
	for _, set := range b.subs {
		for ch := range set {
			close(ch)
		}
	}
	b.subs = map[inbox.ThreadKey]map[chan struct{}]struct{}{}
	return nil
}

// Publish wakes every subscriber of k without blocking: a subscriber that has a token
// pending already knows to read the log.
func (b *LocalBroker) Publish(k inbox.ThreadKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[k] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe registers interest in k. The returned func unsubscribes; it is safe to call
// more than once. After Stop the channel comes back closed.
func (b *LocalBroker) Subscribe(k inbox.ThreadKey) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		close(ch)
		return ch, func() {}
	}
	set := b.subs[k]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		b.subs[k] = set
	}
	set[ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if set, ok := b.subs[k]; ok {
				if _, ok := set[ch]; ok {
					delete(set, ch)
					if len(set) == 0 {
						delete(b.subs, k)
					}
				}
			}
		})
	}
}

// Subscribers counts current subscriptions of k (tests and metrics).
func (b *LocalBroker) Subscribers(k inbox.ThreadKey) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[k])
}
