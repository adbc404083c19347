package agent

import (
	"net/http"
	"sync"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// streamCaps counts open streams per agent (an agent has one token) and per thread.
// Entries exist only while streams are open, so the maps are bounded by the caps.
type streamCaps struct {
	mu       sync.Mutex
	byAgent  map[string]int
	byThread map[inbox.ThreadKey]int
}

func newStreamCaps() *streamCaps {
	return &streamCaps{byAgent: map[string]int{}, byThread: map[inbox.ThreadKey]int{}}
}

// open takes a place for a stream of k, or answers 429 naming the cap that is full; the
// returned func gives the place back.
func (s *streamCaps) open(cfg Config, k inbox.ThreadKey) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAgent[k.Agent] >= cfg.MaxStreams {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"agent %q already has %d streams open (agents[].max_streams)", k.Agent, cfg.MaxStreams)
	}
	if s.byThread[k] >= cfg.MaxStreamsPerThread {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"this thread already has %d streams open (agents[].max_streams_per_thread)", cfg.MaxStreamsPerThread)
	}
	s.byAgent[k.Agent]++
	s.byThread[k]++
	var once sync.Once
	return func() { once.Do(func() { s.close(k) }) }, nil
}

func (s *streamCaps) close(k inbox.ThreadKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAgent[k.Agent]--; s.byAgent[k.Agent] <= 0 {
		delete(s.byAgent, k.Agent)
	}
	if s.byThread[k]--; s.byThread[k] <= 0 {
		delete(s.byThread, k)
	}
}
