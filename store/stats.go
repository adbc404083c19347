package store

import (
	"context"
	"fmt"
	"time"
)

// Stats are gauges read at scrape time.
type Stats struct {
	Due           int // pending records whose due time has passed
	Pending       int // all pending records
	Failed        int // dead letters
	ActiveThreads int // threads with an open, unexpired run
	// Silences by state (pending, active, expired), as alertmanager_silences.
	SilencesPending, SilencesActive, SilencesExpired int
}

// Stats counts queue depth and presence.
func (s *Gauges) Stats(ctx context.Context, now time.Time) (Stats, error) {
	var st Stats
	err := s.r.QueryRowxContext(ctx, s.q(`SELECT
		(SELECT COUNT(*) FROM records WHERE status = 'pending' AND due_at IS NOT NULL AND due_at <= ?),
		(SELECT COUNT(*) FROM records WHERE status = 'pending'),
		(SELECT COUNT(*) FROM records WHERE status = 'failed'),
		(SELECT COUNT(*) FROM (SELECT DISTINCT agent, resource_id, thread_id FROM runs WHERE status = 'open' AND lease_until > ?) t),
		(SELECT COUNT(*) FROM silences WHERE starts_at > ? AND ends_at > ?),
		(SELECT COUNT(*) FROM silences WHERE starts_at <= ? AND ends_at > ?),
		(SELECT COUNT(*) FROM silences WHERE ends_at <= ?)`),
		micros(now), micros(now), micros(now), micros(now), micros(now), micros(now), micros(now)).Scan(
		&st.Due, &st.Pending, &st.Failed, &st.ActiveThreads, &st.SilencesPending, &st.SilencesActive, &st.SilencesExpired)
	if err != nil {
		return Stats{}, fmt.Errorf("read stats: %w", err)
	}
	return st, nil
}
