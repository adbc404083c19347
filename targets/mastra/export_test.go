package mastra

import (
	"time"
)

// WithIdleTimer replaces the idle timer, so tests fire it by hand.
func WithIdleTimer(after func(time.Duration) <-chan time.Time) FollowerOption {
	return func(f *Follower) { f.after = after }
}

// Followed reports how many threads are followed.
func (f *Follower) Followed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.threads)
}
