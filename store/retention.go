package store

import (
	"context"
	"fmt"
	"time"
)

// DeleteEventsBefore deletes up to limit events received before cutoff, oldest first.
// An event a pending (or snoozed) record was created from is kept: it is that record's audit trail
// and what a replay would read.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	res, err := s.w.ExecContext(ctx, s.q(`DELETE FROM events WHERE id IN (
		SELECT e.id FROM events e WHERE e.received_at < ?
		AND NOT EXISTS (SELECT 1 FROM records r WHERE r.event_id = e.id AND r.status IN ('pending', 'snoozed'))
		ORDER BY e.received_at LIMIT ?)`), micros(cutoff), limit)
	if err != nil {
		return 0, fmt.Errorf("delete events before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete events: %w", err)
	}
	return n, nil
}

// DeleteTerminalRecordsBefore deletes up to limit records in a terminal status
// (every status but pending and snoozed: inbox.Status.Terminal) last changed before cutoff,
// oldest first. Pending and snoozed records are never deleted.
func (s *Store) DeleteTerminalRecordsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	res, err := s.w.ExecContext(ctx, s.q(`DELETE FROM records WHERE id IN (
		SELECT id FROM records WHERE status NOT IN ('pending', 'snoozed') AND updated_at < ? ORDER BY updated_at LIMIT ?)`), micros(cutoff), limit)
	if err != nil {
		return 0, fmt.Errorf("delete records before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete records: %w", err)
	}
	return n, nil
}
