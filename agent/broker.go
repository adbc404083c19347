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

// FramePublisher hands the frames a commit logged, once that commit is durable, to the
// thread's subscribers in memory, sparing each a read of the log. It never blocks: a
// subscriber whose buffer is full is woken to read the log instead.
type FramePublisher interface {
	PublishFrames(k inbox.ThreadKey, frames []Frame)
}

// FrameSubscriber is Subscriber with the committed frames themselves. A frame on the
// channel is a hint to use if it is the next one the subscriber needs; the log stays
// the truth, read on every wake-up token (a frame dropped, a frame of another replica).
type FrameSubscriber interface {
	SubscribeFrames(k inbox.ThreadKey) (wake <-chan struct{}, frames <-chan *Frame, unsubscribe func())
}

// frameBuffer is how many committed frames a subscriber may have waiting before it is
// sent back to the log; pointers, so an idle subscriber costs half a kilobyte.
const frameBuffer = 64

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
	subs    map[inbox.ThreadKey]map[chan struct{}]chan *Frame // wake → frames (nil: wake only)
	live    map[inbox.ThreadKey]map[chan Frame]struct{}
	stopped bool
}

var _ Broker = (*LocalBroker)(nil)

// NewLocalBroker returns a running in-process broker.
func NewLocalBroker() *LocalBroker {
	return &LocalBroker{subs: map[inbox.ThreadKey]map[chan struct{}]chan *Frame{}, live: map[inbox.ThreadKey]map[chan Frame]struct{}{}}
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
	b.subs = map[inbox.ThreadKey]map[chan struct{}]chan *Frame{}
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

// PublishFrames hands frames (in seq order) to every subscriber of k without blocking:
// one that takes no frames, or has no room for them all, gets a wake-up token and reads
// the log from where it is.
func (b *LocalBroker) PublishFrames(k inbox.ThreadKey, frames []Frame) {
	if len(frames) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for wake, ch := range b.subs[k] {
		if !sendFrames(ch, frames) {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
}

// sendFrames reports whether all of frames fit in ch.
func sendFrames(ch chan *Frame, frames []Frame) bool {
	if ch == nil {
		return false
	}
	for i := range frames {
		select {
		case ch <- &frames[i]:
		default:
			return false
		}
	}
	return true
}

// Subscribe registers interest in k. The returned func unsubscribes; it is safe to call
// more than once. After Stop the channel comes back closed.
func (b *LocalBroker) Subscribe(k inbox.ThreadKey) (<-chan struct{}, func()) {
	wake, _, unsubscribe := b.subscribe(k, false)
	return wake, unsubscribe
}

// SubscribeFrames is Subscribe with k's committed frames handed over in memory.
func (b *LocalBroker) SubscribeFrames(k inbox.ThreadKey) (<-chan struct{}, <-chan *Frame, func()) {
	return b.subscribe(k, true)
}

func (b *LocalBroker) subscribe(k inbox.ThreadKey, withFrames bool) (<-chan struct{}, <-chan *Frame, func()) {
	ch := make(chan struct{}, 1)
	var frames chan *Frame
	if withFrames {
		frames = make(chan *Frame, frameBuffer)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		close(ch)
		return ch, frames, func() {}
	}
	set := b.subs[k]
	if set == nil {
		set = map[chan struct{}]chan *Frame{}
		b.subs[k] = set
	}
	set[ch] = frames
	var once sync.Once
	return ch, frames, func() {
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
