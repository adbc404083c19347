package github

import (
	"context"
	"fmt"
	"sync"
)

// CIState remembers the last decisive CI conclusion per (repo, branch, check or
// workflow name) — a fork's branch apart from the repository's own, a run naming no
// branch per commit — so a success can be told apart from a recovery after a failure.
// The handler keeps an in-memory one unless given another; a database-backed
// implementation survives restarts and is shared by replicas.
type CIState interface {
	LastConclusion(ctx context.Context, key string) (string, error)
	SetConclusion(ctx context.Context, key, conclusion string) error
}

// DefaultCIStateSize bounds the in-memory state: branches come and go.
const DefaultCIStateSize = 10000

// MemoryCIState is a bounded in-process CIState. Past its size it forgets the
// oldest key; a forgotten failure means one recovery goes unreported, nothing worse.
type MemoryCIState struct {
	mu    sync.Mutex
	max   int
	last  map[string]string
	order []string // insertion order of keys, for eviction
}

// NewMemoryCIState holds at most max keys (DefaultCIStateSize when max <= 0).
func NewMemoryCIState(max int) *MemoryCIState {
	if max <= 0 {
		max = DefaultCIStateSize
	}
	return &MemoryCIState{max: max, last: map[string]string{}}
}

// LastConclusion returns "" for a key never seen.
func (m *MemoryCIState) LastConclusion(_ context.Context, key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[key], nil
}

// SetConclusion records the conclusion for key.
func (m *MemoryCIState) SetConclusion(_ context.Context, key, conclusion string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.last[key]; !ok {
		m.order = append(m.order, key)
		for len(m.order) > m.max {
			delete(m.last, m.order[0])
			m.order = m.order[1:]
		}
	}
	m.last[key] = conclusion
	return nil
}

// StateStore is durable per-connector key/value state, as the database offers.
type StateStore interface {
	ConnectorState(ctx context.Context, connector, key string) (value string, ok bool, err error)
	SetConnectorState(ctx context.Context, connector, key, value string) error
}

// storeCIState keeps CI conclusions in a StateStore under "ci:{key}".
type storeCIState struct {
	st        StateStore
	connector string
}

// NewStoreCIState backs CIState with durable state stored under connector
// (e.g. "github"), so recoveries survive restarts and are seen by every replica.
func NewStoreCIState(st StateStore, connector string) CIState {
	return &storeCIState{st: st, connector: connector}
}

func (s *storeCIState) LastConclusion(ctx context.Context, key string) (string, error) {
	v, _, err := s.st.ConnectorState(ctx, s.connector, "ci:"+key)
	if err != nil {
		return "", fmt.Errorf("read CI conclusion: %w", err)
	}
	return v, nil
}

func (s *storeCIState) SetConclusion(ctx context.Context, key, conclusion string) error {
	if err := s.st.SetConnectorState(ctx, s.connector, "ci:"+key, conclusion); err != nil {
		return fmt.Errorf("save CI conclusion: %w", err)
	}
	return nil
}
