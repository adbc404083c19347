package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// markInFlightTx lists the signals delivered into run (woken with or delivered into it,
// not persisted) for recovery: the run ended without finishing, so the agent may never
// have acted on them. Called in the transaction that closes the run.
func (s *Store) markInFlightTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, runID string, now time.Time) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO recoveries (signal_id, agent, resource_id, thread_id, run_id, created_at)
		SELECT id, agent, resource_id, thread_id, run_id, ? FROM signals
		WHERE run_id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND event = 'signal'
		  AND action IN ('wake', 'deliver')
		ON CONFLICT (agent, resource_id, thread_id, signal_id) DO NOTHING`), micros(now), runID, k.Agent, k.Resource, k.Thread)
	if err != nil {
		return fmt.Errorf("list in-flight signals of run %s: %w", runID, err)
	}
	return nil
}

// PendingRecoveries returns the logged frames of k's signals awaiting recovery, in log
// order, up to limit.
func (s *Store) PendingRecoveries(ctx context.Context, k inbox.ThreadKey, limit int) ([]agent.Frame, error) {
	var rows []frameRow
	err := s.readSelect(ctx, &rows, pendingRecoveriesQuery(), k.Agent, k.Resource, k.Thread, limit)
	if err != nil {
		return nil, fmt.Errorf("read pending recoveries of %s: %w", k, err)
	}
	out := make([]agent.Frame, 0, len(rows))
	for i := range rows {
		f, err := rows[i].frame()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// recoveredTx closes the recovery of k's signals whose redelivery the pass logs.
func (s *Store) recoveredTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, ids []string) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM recoveries WHERE agent = ? AND resource_id = ? AND thread_id = ? AND signal_id = ?`),
			k.Agent, k.Resource, k.Thread, id); err != nil {
			return fmt.Errorf("close recovery of %s: %w", id, err)
		}
	}
	return nil
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
