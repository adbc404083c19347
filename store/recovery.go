package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// WithRecoveryRules gives each target kind's rule for the in-flight signals of a run
// that ends unfinished (the target table's rows): a kind whose runtime keeps what it
// accepted has those signals left out of recovery. A kind not given redelivers them all.
func WithRecoveryRules(rules map[string]delivery.RecoveryRule) Option {
	return func(s *DB) {
		s.keptBy = nil
		for kind, r := range rules {
			if r == delivery.RuntimeKeepsAccepted {
				s.keptBy = append(s.keptBy, kind)
			}
		}
		slices.Sort(s.keptBy)
	}
}

// markInFlightTx lists the signals delivered into run (woken with or delivered into it,
// not persisted) for recovery, with why the run ended: the run ended without finishing,
// so the agent may never have acted on them. A signal a target of a kind whose runtime
// keeps what it accepted (WithRecoveryRules) took is left out: sending it again would
// show it twice. Called in the transaction that closes the run.
func (s *Runs) markInFlightTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, runID, cause string, now time.Time) error {
	args := []any{cause, micros(now), runID, k.Agent, k.Resource, k.Thread}
	kept := ""
	if len(s.keptBy) > 0 {
		kept = `AND NOT EXISTS (SELECT 1 FROM delivery_attempts a
			WHERE a.signal_id = s.id AND a.agent = s.agent AND a.resource_id = s.resource_id AND a.thread_id = s.thread_id
			  AND a.target IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(s.keptBy)), ", ") + `) AND a.outcome = ?)`
		for _, kind := range s.keptBy {
			args = append(args, kind)
		}
		args = append(args, delivery.OutcomeDelivered)
	}
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO recoveries (signal_id, agent, resource_id, thread_id, run_id, cause, created_at)
		SELECT id, agent, resource_id, thread_id, run_id, ?, ? FROM signals s
		WHERE run_id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND event = 'signal'
		  AND action IN ('wake', 'deliver')
		  `+kept+`
		ON CONFLICT (agent, resource_id, thread_id, signal_id) DO NOTHING`), args...)
	if err != nil {
		return fmt.Errorf("list in-flight signals of run %s: %w", runID, err)
	}
	return nil
}

// recoveryRow is a pending recovery: the logged frame and why its run ended.
type recoveryRow struct {
	frameRow
	Cause string `db:"cause"`
}

// PendingRecoveries returns the logged frames of k's signals awaiting recovery, in log
// order, up to limit.
func (s *Queue) PendingRecoveries(ctx context.Context, k inbox.ThreadKey, limit int) ([]delivery.Recovery, error) {
	var rows []recoveryRow
	err := s.readSelect(ctx, &rows, pendingRecoveriesQuery(), k.Agent, k.Resource, k.Thread, limit)
	if err != nil {
		return nil, fmt.Errorf("read pending recoveries of %s: %w", k, err)
	}
	out := make([]delivery.Recovery, 0, len(rows))
	for i := range rows {
		f, err := rows[i].frame()
		if err != nil {
			return nil, err
		}
		out = append(out, delivery.Recovery{Frame: f, Cause: rows[i].Cause})
	}
	return out, nil
}

// recoveredTx closes the recovery of k's signals whose redelivery the pass logs.
func (s *Queue) recoveredTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, ids []string) error {
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
