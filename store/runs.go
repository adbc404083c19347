package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

const runColumns = `id, agent, resource_id, thread_id, status, origin, opened_at, lease_until, closed_at`

type runRow struct {
	ID         string        `db:"id"`
	Agent      string        `db:"agent"`
	Resource   string        `db:"resource_id"`
	Thread     string        `db:"thread_id"`
	Status     string        `db:"status"`
	Origin     string        `db:"origin"`
	OpenedAt   int64         `db:"opened_at"`
	LeaseUntil int64         `db:"lease_until"`
	ClosedAt   sql.NullInt64 `db:"closed_at"`
}

func (row runRow) run() agent.Run {
	return agent.Run{
		ID: row.ID, Thread: inbox.ThreadKey{Agent: row.Agent, Resource: row.Resource, Thread: row.Thread},
		Status: row.Status, Origin: row.Origin, OpenedAt: fromMicros(row.OpenedAt),
		LeaseUntil: fromMicros(row.LeaseUntil), ClosedAt: fromNullMicros(row.ClosedAt),
	}
}

func runFrame(r agent.Run, status string, now time.Time) agent.Frame {
	return agent.Frame{Event: agent.EventRun, ID: inbox.NewID(), Thread: r.Thread, RunID: r.ID,
		RunStatus: status, Origin: r.Origin, CreatedAt: now}
}

// OpenRun inserts r and logs a run frame, unless the thread has a live run: that one is
// returned with its lease extended to r.LeaseUntil (created false).
func (s *Runs) OpenRun(ctx context.Context, r agent.Run) (agent.Run, bool, error) {
	var out agent.Run
	var created bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := s.lockThread(ctx, tx, r.Thread, r.OpenedAt); err != nil {
			return err
		}
		var err error
		out, created, err = s.openRunTx(ctx, tx, r)
		return err
	})
	if err != nil {
		return agent.Run{}, false, fmt.Errorf("open run on %s: %w", r.Thread, err)
	}
	return out, created, nil
}

// openRunTx is OpenRun inside tx; the caller holds the thread lock.
func (s *Runs) openRunTx(ctx context.Context, tx *sqlx.Tx, r agent.Run) (agent.Run, bool, error) {
	live, err := s.liveRunTx(ctx, tx, r.Thread, r.OpenedAt)
	if err != nil {
		return agent.Run{}, false, err
	}
	if live != nil {
		out := *live
		if r.LeaseUntil.After(live.LeaseUntil) {
			out.LeaseUntil = r.LeaseUntil
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET lease_until = ? WHERE id = ?`), micros(r.LeaseUntil), live.ID); err != nil {
				return agent.Run{}, false, fmt.Errorf("renew run %s: %w", live.ID, err)
			}
		}
		return out, false, nil
	}
	// A run whose lease lapsed but that no expiry pass closed yet ends here, before the
	// new one opens, so its in-flight signals are recovered into the new one.
	if err := s.expireLapsedTx(ctx, tx, r.Thread, r.OpenedAt); err != nil {
		return agent.Run{}, false, err
	}
	k := r.Thread
	_, err = s.writeTx(tx).exec(ctx, qInsertRun, r.ID, k.Agent, k.Resource, k.Thread, agent.RunOpen, r.Origin, micros(r.OpenedAt), micros(r.LeaseUntil))
	if err != nil {
		return agent.Run{}, false, fmt.Errorf("insert run: %w", err)
	}
	if _, _, err := s.appendFrameTx(ctx, tx, runFrame(r, agent.RunOpen, r.OpenedAt)); err != nil {
		return agent.Run{}, false, err
	}
	r.Status = agent.RunOpen
	return r, true, nil
}

// HeartbeatRun extends a live run's lease to leaseUntil.
func (s *Runs) HeartbeatRun(ctx context.Context, k inbox.ThreadKey, id string, now, leaseUntil time.Time) (agent.Run, error) {
	var row runRow
	err := s.w.GetContext(ctx, &row, s.q(`UPDATE runs SET lease_until = ?
		WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until > ?
		RETURNING `+runColumns), micros(leaseUntil), id, k.Agent, k.Resource, k.Thread, micros(now))
	if err == nil {
		return row.run(), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return agent.Run{}, fmt.Errorf("renew run %s: %w", id, err)
	}
	run, err := s.getRun(ctx, s.w, k, id)
	if err != nil {
		return agent.Run{}, err
	}
	if run.Status == agent.RunOpen {
		return run, fmt.Errorf("run %s: lease lapsed at %s: %w", id, run.LeaseUntil.Format(time.RFC3339), agent.ErrRunClosed)
	}
	return run, fmt.Errorf("run %s is %s: %w", id, run.Status, agent.ErrRunClosed)
}

func (s *Runs) getRun(ctx context.Context, q sqlx.QueryerContext, k inbox.ThreadKey, id string) (agent.Run, error) {
	var row runRow
	err := sqlx.GetContext(ctx, q, &row, s.q(`SELECT `+runColumns+` FROM runs
		WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ?`), id, k.Agent, k.Resource, k.Thread)
	if errors.Is(err, sql.ErrNoRows) {
		return agent.Run{}, fmt.Errorf("run %s on %s: %w", id, k, agent.ErrRunNotFound)
	}
	if err != nil {
		return agent.Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	return row.run(), nil
}

// GetRun returns one run of a thread, or agent.ErrRunNotFound.
func (s *Runs) GetRun(ctx context.Context, k inbox.ThreadKey, id string) (agent.Run, error) {
	return s.getRun(ctx, s.r, k, id)
}

// CloseRun moves an open run to status (finished, aborted) and logs a run frame. When the
// thread has no live run left, records waiting for it to turn idle become due at once.
func (s *Runs) CloseRun(ctx context.Context, k inbox.ThreadKey, id, status, cause string, now time.Time) (agent.Run, bool, bool, error) {
	var out agent.Run
	var closed, idle bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := s.lockThread(ctx, tx, k, now); err != nil {
			return err
		}
		var row runRow
		err := tx.GetContext(ctx, &row, s.q(`UPDATE runs SET status = ?, closed_at = ?
			WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' RETURNING `+runColumns),
			status, micros(now), id, k.Agent, k.Resource, k.Thread)
		if errors.Is(err, sql.ErrNoRows) {
			out, err = s.getRun(ctx, tx, k, id)
			return err
		}
		if err != nil {
			return fmt.Errorf("close run %s: %w", id, err)
		}
		out, closed = row.run(), true
		if _, _, err := s.appendFrameTx(ctx, tx, runFrame(out, status, now)); err != nil {
			return err
		}
		if status != agent.RunFinished {
			if cause == "" {
				cause = agent.CauseAborted
			}
			if err := s.markInFlightTx(ctx, tx, k, id, cause, now); err != nil {
				return err
			}
		}
		if out.Origin == agent.OriginWake {
			if err := s.promoteWaiter(ctx, tx, k.Agent, now); err != nil {
				return err
			}
		}
		idle, err = s.promoteIfIdle(ctx, tx, k, now)
		return err
	})
	if err != nil {
		return agent.Run{}, false, false, err
	}
	return out, closed, idle, nil
}

// qLapsedRunsAll finds lapsed runs (prepared on SQLite: every dispatch pass reads it).
const qLapsedRunsAll = `SELECT ` + runColumns + ` FROM runs
	WHERE status = 'open' AND lease_until <= ? ORDER BY lease_until LIMIT 200`

// ExpireRuns closes open runs whose lease lapsed by now, one transaction per run, taking
// the thread lock first like every other writer of a thread.
func (s *Runs) ExpireRuns(ctx context.Context, now time.Time) (changed, idle []inbox.ThreadKey, err error) {
	var rows []runRow
	if err := s.readSelect(ctx, &rows, qLapsedRunsAll, micros(now)); err != nil {
		return nil, nil, fmt.Errorf("find lapsed runs: %w", err)
	}
	for _, row := range rows {
		r := row.run()
		var expired, turnedIdle bool
		err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			if err := s.lockThread(ctx, tx, r.Thread, now); err != nil {
				return err
			}
			var err error
			if expired, err = s.expireRunTx(ctx, tx, r, now); err != nil || !expired {
				return err
			}
			turnedIdle, err = s.promoteIfIdle(ctx, tx, r.Thread, now)
			return err
		})
		if err != nil {
			return changed, idle, err
		}
		if expired {
			changed = append(changed, r.Thread)
		}
		if turnedIdle {
			idle = append(idle, r.Thread)
		}
	}
	return changed, idle, nil
}

// expireRunTx closes r as expired if it is still open with its lease lapsed by now: a run
// frame, and its in-flight signals listed for recovery. It reports false when r was
// renewed or closed meanwhile. The caller holds the thread lock.
func (s *Runs) expireRunTx(ctx context.Context, tx *sqlx.Tx, r agent.Run, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'expired', closed_at = lease_until
		WHERE id = ? AND status = 'open' AND lease_until <= ?`), r.ID, micros(now))
	if err != nil {
		return false, fmt.Errorf("expire run %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, _, err := s.appendFrameTx(ctx, tx, runFrame(r, agent.RunExpired, now)); err != nil {
		return false, err
	}
	if r.Origin == agent.OriginWake {
		if err := s.promoteWaiter(ctx, tx, r.Thread.Agent, now); err != nil {
			return false, err
		}
	}
	return true, s.markInFlightTx(ctx, tx, r.Thread, r.ID, agent.CauseLeaseExpired, now)
}

// expireLapsedTx expires k's open runs whose lease lapsed by now. The caller holds the
// thread lock.
func (s *Runs) expireLapsedTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) error {
	var rows []runRow
	if err := s.writeTx(tx).sel(ctx, &rows, qLapsedRuns, k.Agent, k.Resource, k.Thread, micros(now)); err != nil {
		return fmt.Errorf("find lapsed runs of %s: %w", k, err)
	}
	for _, row := range rows {
		if _, err := s.expireRunTx(ctx, tx, row.run(), now); err != nil {
			return err
		}
	}
	return nil
}

// LiveRun returns the thread's live run (open, lease not lapsed), or nil.
func (s *Runs) LiveRun(ctx context.Context, k inbox.ThreadKey, now time.Time) (*agent.Run, error) {
	return s.liveRun(ctx, s.r, k, now)
}

func (s *core) liveRun(ctx context.Context, q sqlx.QueryerContext, k inbox.ThreadKey, now time.Time) (*agent.Run, error) {
	var row runRow
	return row.live(sqlx.GetContext(ctx, q, &row, s.q(qLiveRun), k.Agent, k.Resource, k.Thread, micros(now)), k)
}

// liveRunTx is liveRun in a write transaction, through the prepared statement.
func (s *core) liveRunTx(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) (*agent.Run, error) {
	var row runRow
	return row.live(s.writeTx(tx).get(ctx, &row, qLiveRun, k.Agent, k.Resource, k.Thread, micros(now)), k)
}

// live is the run read into row by a query that returned err.
func (row *runRow) live(err error, k inbox.ThreadKey) (*agent.Run, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read live run of %s: %w", k, err)
	}
	r := row.run()
	return &r, nil
}

// promoteIfIdle makes the thread's full-when-idle records due now when no live run is
// left: the idle transition itself triggers their delivery, durably, so a crash between
// the transition and the dispatch loses nothing. A record backing off after a failure
// keeps its retry time.
func (s *core) promoteIfIdle(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) (bool, error) {
	live, err := s.liveRunTx(ctx, tx, k, now)
	if err != nil || live != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, s.q(`UPDATE records SET due_at = ?
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'pending' AND full_when_idle = `+s.trueLit()+`
		AND (due_at IS NULL OR due_at > ?) AND (next_attempt_at IS NULL OR next_attempt_at <= ?)`),
		micros(now), k.Agent, k.Resource, k.Thread, micros(now), micros(now))
	if err != nil {
		return false, fmt.Errorf("make idle-waiting records of %s due: %w", k, err)
	}
	return true, nil
}
