package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

var _ delivery.Health = (*Targets)(nil)

// notDown is the condition that the agent of the row aliased alias has no down target:
// a down target's records wait for its probe.
func notDown(alias string) string {
	return `NOT EXISTS (SELECT 1 FROM targets g WHERE g.agent = ` + alias + `.agent AND g.state = 'down')`
}

type targetRow struct {
	Agent       string        `db:"agent"`
	State       string        `db:"state"`
	Since       int64         `db:"since"`
	Failures    int           `db:"failures"`
	LastError   string        `db:"last_error"`
	LastErrorAt sql.NullInt64 `db:"last_error_at"`
	NextProbeAt sql.NullInt64 `db:"next_probe_at"`
}

func (r targetRow) state() delivery.TargetState {
	st := delivery.TargetState{Agent: r.Agent, State: r.State, Failures: r.Failures,
		LastError: r.LastError, LastErrorAt: fromNullMicros(r.LastErrorAt), NextProbeAt: fromNullMicros(r.NextProbeAt)}
	if r.Since != 0 {
		st.Since = fromMicros(r.Since)
	}
	return st
}

const targetColumns = `agent, state, since, failures, last_error, last_error_at, next_probe_at`

// qTargetStates is read on every dispatch pass (prepared on SQLite).
const qTargetStates = `SELECT ` + targetColumns + ` FROM targets ORDER BY agent`

// TargetStates lists the targets that have failed at least once, by agent.
func (s *Targets) TargetStates(ctx context.Context) ([]delivery.TargetState, error) {
	var rows []targetRow
	if err := s.readSelect(ctx, &rows, qTargetStates); err != nil {
		return nil, fmt.Errorf("read target states: %w", err)
	}
	out := make([]delivery.TargetState, len(rows))
	for i, r := range rows {
		out[i] = r.state()
	}
	return out, nil
}

// forUpdate locks the selected row on PostgreSQL (SQLite's writer is already exclusive).
func (s *core) forUpdate() string {
	if s.driver == DriverPostgres {
		return ` FOR UPDATE`
	}
	return ``
}

// TargetFailed counts a failed attempt and turns the target down at threshold.
func (s *Targets) TargetFailed(ctx context.Context, agentID string, now time.Time, threshold int, probeAt time.Time, retryAt *time.Time, msg string) (delivery.TargetState, bool, error) {
	var row targetRow
	var down bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		// The upsert takes the row lock, so replicas failing at once count one by one.
		// A target seen failing for the first time has been up since an unknown time (0).
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO targets (agent, state, since, failures, last_error, last_error_at)
			VALUES (?, 'up', 0, 1, ?, ?)
			ON CONFLICT (agent) DO UPDATE SET failures = targets.failures + 1, last_error = excluded.last_error,
				last_error_at = excluded.last_error_at`),
			agentID, cleanText(msg), micros(now)); err != nil {
			return fmt.Errorf("count failure: %w", err)
		}
		res, err := tx.ExecContext(ctx, s.q(`UPDATE targets SET state = 'down', since = ?, next_probe_at = ?
			WHERE agent = ? AND state = 'up' AND failures >= ?`), micros(now), micros(probeAt), agentID, max(threshold, 1))
		if err != nil {
			return fmt.Errorf("mark down: %w", err)
		}
		n, _ := res.RowsAffected()
		down = n > 0
		if !down && retryAt != nil {
			// A down target that names its own retry time is probed then.
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE targets SET next_probe_at = ? WHERE agent = ? AND state = 'down'`),
				micros(*retryAt), agentID); err != nil {
				return fmt.Errorf("move probe: %w", err)
			}
		}
		return tx.GetContext(ctx, &row, s.q(`SELECT `+targetColumns+` FROM targets WHERE agent = ?`), agentID)
	})
	if err != nil {
		return delivery.TargetState{}, false, fmt.Errorf("record failure of target %s: %w", agentID, err)
	}
	return row.state(), down, nil
}

// TargetSucceeded clears the target's failures; a down target is up again and its
// records waiting for a retry are due now.
func (s *Targets) TargetSucceeded(ctx context.Context, agentID string, now time.Time) (bool, error) {
	var up bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var state string
		err := tx.GetContext(ctx, &state, s.q(`SELECT state FROM targets WHERE agent = ?`+s.forUpdate()), agentID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		up = state == delivery.TargetDown
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE targets SET failures = 0, state = 'up', next_probe_at = NULL,
			since = CASE WHEN state = 'down' THEN ? ELSE since END WHERE agent = ?`), micros(now), agentID); err != nil {
			return fmt.Errorf("mark up: %w", err)
		}
		if !up {
			return nil
		}
		// Records that failed before or during the outage, and those a failed pass put
		// off behind them, wait for the target, not for their own backoff: the backlog
		// goes out now. (A record only paced or waiting for idle is planned again and
		// rescheduled.)
		_, err = tx.ExecContext(ctx, s.q(qReleaseBacklog), micros(now), agentID, micros(now), micros(now), micros(now))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record success of target %s: %w", agentID, err)
	}
	return up, nil
}

// ClaimProbe moves a down target's due probe to next; exactly one caller succeeds.
func (s *Targets) ClaimProbe(ctx context.Context, agentID string, now, next time.Time) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE targets SET next_probe_at = ?
			WHERE agent = ? AND state = 'down' AND (next_probe_at IS NULL OR next_probe_at <= ?)`),
			micros(next), agentID, micros(now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim probe of target %s: %w", agentID, err)
	}
	return n > 0, nil
}

// ClaimProbeThread leases the thread of the agent's oldest due record, unless another
// dispatcher holds it.
func (s *Targets) ClaimProbeThread(ctx context.Context, agentID, owner string, now, until time.Time) (inbox.ThreadKey, bool, error) {
	var rows []threadKeyRow
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &rows, s.q(s.probeThreadQuery()), owner, micros(until), agentID, micros(now), micros(now))
	})
	if err != nil {
		return inbox.ThreadKey{}, false, fmt.Errorf("claim probe thread of %s: %w", agentID, err)
	}
	if len(rows) == 0 {
		return inbox.ThreadKey{}, false, nil
	}
	return inbox.ThreadKey{Agent: rows[0].Agent, Resource: rows[0].Resource, Thread: rows[0].Thread}, true, nil
}

// qReleaseBacklog makes an agent's waiting records due at once (its target is back).
const qReleaseBacklog = `UPDATE records SET due_at = ?, next_attempt_at = NULL
	WHERE agent = ? AND status = 'pending' AND due_at IS NOT NULL AND due_at > ?
	  AND (next_attempt_at IS NOT NULL OR deliver_at <= ? OR summary_at <= ?)`

// probeThreadQuery is ClaimProbeThread's statement.
func (s *Targets) probeThreadQuery() string {
	lock := ``
	if s.driver == DriverPostgres {
		lock = ` FOR UPDATE OF t SKIP LOCKED`
	}
	return `UPDATE threads SET lease_owner = ?, lease_until = ?
		WHERE (agent, resource_id, thread_id) IN (
			SELECT t.agent, t.resource_id, t.thread_id FROM records r
			JOIN threads t ON t.agent = r.agent AND t.resource_id = r.resource_id AND t.thread_id = r.thread_id
			WHERE r.agent = ? AND r.status = 'pending' AND r.due_at IS NOT NULL AND r.due_at <= ?
			  AND (t.lease_until IS NULL OR t.lease_until <= ?)
			ORDER BY r.created_at, r.id LIMIT 1` + lock + `)
		RETURNING agent, resource_id, thread_id`
}

// Backlog counts each agent's records waiting for its target: pending records whose
// delivery or summary time has come, or that wait for a retry, including those a failed
// pass put off behind another (exactly what a target coming back makes due at once).
func (s *Targets) Backlog(ctx context.Context, now time.Time) (map[string]int, error) {
	var rows []struct {
		Agent string `db:"agent"`
		N     int    `db:"n"`
	}
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT agent, COUNT(*) AS n FROM records
		WHERE status = 'pending' AND due_at IS NOT NULL
		  AND (due_at <= ? OR next_attempt_at IS NOT NULL OR deliver_at <= ? OR summary_at <= ?)
		GROUP BY agent`), micros(now), micros(now), micros(now))
	if err != nil {
		return nil, fmt.Errorf("count backlog: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Agent] = r.N
	}
	return out, nil
}
