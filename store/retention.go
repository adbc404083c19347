package store

import (
	"context"
	"fmt"
	"time"
)

// DeleteEventsBefore deletes up to limit events received before cutoff, oldest first.
// An event a pending (or snoozed) record was created from is kept: it is that record's audit trail
// and what a replay would read.
func (s *Retention) DeleteEventsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
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
func (s *Retention) DeleteTerminalRecordsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
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

// deleteBatch runs a bounded DELETE and counts what it removed.
func (s *Retention) deleteBatch(ctx context.Context, what, query string, args ...any) (int64, error) {
	res, err := s.w.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", what, err)
	}
	return n, nil
}

// DeleteEndedSilencesBefore deletes up to limit silences that ended (on time or expired
// early) before cutoff, earliest end first. Live and pending silences are never deleted.
func (s *Retention) DeleteEndedSilencesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.deleteBatch(ctx, "silences ended before "+cutoff.Format(time.RFC3339), `DELETE FROM silences WHERE id IN (
		SELECT id FROM silences WHERE ends_at < ? ORDER BY ends_at LIMIT ?)`, micros(cutoff), limit)
}

// DeleteEndedWatchesBefore deletes up to limit watches that ended before cutoff, earliest
// end first. Live watches are never deleted; an end announced again for a deleted watch
// (a late terminal event) is dropped as for any ended one.
func (s *Retention) DeleteEndedWatchesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.deleteBatch(ctx, "watches ended before "+cutoff.Format(time.RFC3339), `DELETE FROM watches WHERE id IN (
		SELECT id FROM watches WHERE ended_at IS NOT NULL AND ended_at < ? ORDER BY ended_at LIMIT ?)`, micros(cutoff), limit)
}

// DeleteFinishedRepliesBefore deletes up to limit replies that are finished (sent, failed
// or declined) and unchanged since before cutoff, oldest first. Queued and pending
// (awaiting approval) replies are never deleted. A reply changes after it is made, so one
// last changed before cutoff was made before it too: the walk follows replies_created
// and stops at cutoff instead of reading the whole table.
func (s *Retention) DeleteFinishedRepliesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.deleteBatch(ctx, "replies finished before "+cutoff.Format(time.RFC3339), `DELETE FROM replies WHERE id IN (
		SELECT id FROM replies WHERE created_at < ? AND updated_at < ? AND status IN ('sent', 'failed', 'declined')
		ORDER BY created_at, id LIMIT ?)`, micros(cutoff), micros(cutoff), limit)
}
