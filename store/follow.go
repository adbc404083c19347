package store

import (
	"context"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// LiveRunThreads lists the threads of agentID with a live run at now: a presence follower
// starting up resumes following them, so a run still going on the runtime is closed
// when it ends instead of lapsing.
func (s *Runs) LiveRunThreads(ctx context.Context, agentID string, now time.Time) ([]inbox.ThreadKey, error) {
	var rows []threadKeyRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT DISTINCT agent, resource_id, thread_id FROM runs
		WHERE agent = ? AND status = 'open' AND lease_until > ? ORDER BY resource_id, thread_id LIMIT 10000`), agentID, micros(now))
	if err != nil {
		return nil, fmt.Errorf("list live runs of %s: %w", agentID, err)
	}
	out := make([]inbox.ThreadKey, len(rows))
	for i, r := range rows {
		out[i] = inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread}
	}
	return out, nil
}
