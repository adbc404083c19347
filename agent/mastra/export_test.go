package mastra

import (
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// WithIdleTimer replaces the idle timer, so tests fire it by hand.
func WithIdleTimer(after func(time.Duration) <-chan time.Time) FollowerOption {
	return func(f *Follower) { f.after = after }
}

// WithExitHook is told when a thread's stream goroutine ends.
func WithExitHook(fn func(k inbox.ThreadKey)) FollowerOption {
	return func(f *Follower) { f.exited = fn }
}

// Followed reports how many threads are followed.
func (f *Follower) Followed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.threads)
}
