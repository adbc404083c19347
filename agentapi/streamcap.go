package agentapi

import (
	"net/http"
	"sync"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// streamBudget is the gateway's one cap on open streams, the agents' and the console
// viewers' together: each holds a connection, and server.max_connections must keep room
// for ingest and the APIs whatever the number of agents. Its lock guards every pool.
type streamBudget struct {
	mu    sync.Mutex
	limit int
	open  int
}

// viewerShare is how much of the budget console viewers may hold: the rest stays for the
// agents' own streams, so open console tabs never crowd the agents out.
func viewerShare(limit int) int { return max(limit/4, 1) }

// streamCaps is one pool of streams (the agents' own, or the console viewers'), counted
// per agent (an agent has one token) and per thread, and within the gateway's budget.
// Entries exist only while streams are open, so the maps are bounded by the caps.
type streamCaps struct {
	budget   *streamBudget
	share    int    // of the budget this pool may hold
	pool     string // names the pool in a refusal
	held     int
	byAgent  map[string]int
	byThread map[inbox.ThreadKey]int
}

func newStreamCaps(b *streamBudget, share int, pool string) *streamCaps {
	return &streamCaps{budget: b, share: share, pool: pool, byAgent: map[string]int{}, byThread: map[inbox.ThreadKey]int{}}
}

// open takes a place for a stream of k, or answers 429 naming the cap that is full; the
// returned func gives the place back.
func (s *streamCaps) open(cfg agent.Config, k inbox.ThreadKey) (func(), error) {
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	if s.budget.open >= s.budget.limit {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"the gateway already has %d streams open (three quarters of server.max_connections)", s.budget.limit)
	}
	if s.held >= s.share {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"%s already hold %d streams, their share of the gateway's", s.pool, s.share)
	}
	if s.byAgent[k.Agent] >= cfg.MaxStreams {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"agent %q already has %d streams open (agents[].max_streams)", k.Agent, cfg.MaxStreams)
	}
	if s.byThread[k] >= cfg.MaxStreamsPerThread {
		return nil, server.NewError(http.StatusTooManyRequests, "rate_limited",
			"this thread already has %d streams open (agents[].max_streams_per_thread)", cfg.MaxStreamsPerThread)
	}
	s.budget.open++
	s.held++
	s.byAgent[k.Agent]++
	s.byThread[k]++
	var once sync.Once
	return func() { once.Do(func() { s.close(k) }) }, nil
}

func (s *streamCaps) close(k inbox.ThreadKey) {
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	s.budget.open--
	s.held--
	if s.byAgent[k.Agent]--; s.byAgent[k.Agent] <= 0 {
		delete(s.byAgent, k.Agent)
	}
	if s.byThread[k]--; s.byThread[k] <= 0 {
		delete(s.byThread, k)
	}
}
