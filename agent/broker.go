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

// LivePublisher hands a frame that is never logged (a transient signal's) to the
// thread's current subscribers, once: a subscriber that is not connected, or too slow
// to take it, misses it, as Mastra's transient signals go only to live listeners.
type LivePublisher interface {
	PublishLive(k inbox.ThreadKey, f Frame)
}

// LiveSubscriber hands out channels of a thread's live-only frames.
type LiveSubscriber interface {
	SubscribeLive(k inbox.ThreadKey) (<-chan Frame, func())
}

// liveBuffer is how many live-only frames a subscriber may have waiting.
const liveBuffer = 16

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
	live    map[inbox.ThreadKey]map[chan Frame]struct{}
	stopped bool
}

var _ Broker = (*LocalBroker)(nil)

// NewLocalBroker returns a running in-process broker.
func NewLocalBroker() *LocalBroker {
	return &LocalBroker{subs: map[inbox.ThreadKey]map[chan struct{}]struct{}{}, live: map[inbox.ThreadKey]map[chan Frame]struct{}{}}
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
	for _, set := range b.live {
		for ch := range set {
			close(ch)
		}
	}
	b.live = map[inbox.ThreadKey]map[chan Frame]struct{}{}
	return nil
}

// PublishLive hands f to every live subscriber of k without blocking.
func (b *LocalBroker) PublishLive(k inbox.ThreadKey, f Frame) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.live[k] {
		select {
		case ch <- f:
		default:
		}
	}
}

// SubscribeLive registers for k's live-only frames; the returned func unsubscribes.
// After Stop the channel comes back closed.
func (b *LocalBroker) SubscribeLive(k inbox.ThreadKey) (<-chan Frame, func()) {
	ch := make(chan Frame, liveBuffer)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		close(ch)
		return ch, func() {}
	}
	set := b.live[k]
	if set == nil {
		set = map[chan Frame]struct{}{}
		b.live[k] = set
	}
	set[ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if set, ok := b.live[k]; ok {
				delete(set, ch)
				if len(set) == 0 {
					delete(b.live, k)
				}
			}
		})
	}
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
