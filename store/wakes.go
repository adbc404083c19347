package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
)

var _ agent.WakeStore = (*Runs)(nil)

// queuedRetry bounds how long a queued wake waits before its thread is looked at again
// when no wake run of the agent is open to free a slot (the waiters ahead of it hold
// the free slots and are being dispatched).
const queuedRetry = 30 * time.Second

// WakeRun opens r on an idle thread within req's budget and cap, in one transaction:
// the thread's wake log says whether the budget allows a wake, and (with a cap) the
// agent's open wake runs and waiting threads say whether it is r's turn. On PostgreSQL a
// transaction-scoped advisory lock per agent serialises the cap's count across replicas;
// SQLite's single writer already does. A thread with a live run adopts it (no wake).
func (s *Runs) WakeRun(ctx context.Context, r agent.Run, req agent.WakeRequest) (agent.WakeResult, error) {
	var res agent.WakeResult
	k, now := r.Thread, r.OpenedAt
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if req.Limit > 0 && s.driver == DriverPostgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/wake/' || $1, 0))`,
				k.Agent); err != nil {
				return fmt.Errorf("lock wakes of %s: %w", k.Agent, err)
			}
		}
		if err := s.lockThread(ctx, tx, k, now); err != nil {
			return err
		}
		res = agent.WakeResult{}
		live, err := s.liveRun(ctx, tx, k, now)
		if err != nil {
			return err
		}
		var wakes []time.Time
		if live == nil && req.Budget != nil {
			if wakes, err = s.wakeLog(ctx, tx, k); err != nil {
				return err
			}
			if spent, until := req.Budget.Spent(wakes, now); spent && !req.Exempt {
				res = agent.WakeResult{Outcome: agent.WakeSpent, Until: until}
				_, err := s.leaveWakeQueue(ctx, tx, k, now)
				return err
			}
		}
		if live == nil && req.Limit > 0 {
			turn, until, err := s.wakeTurn(ctx, tx, k, req, now)
			if err != nil || !turn {
				res = agent.WakeResult{Outcome: agent.WakeQueued, Until: until}
				return err
			}
		}
		// Woken: the thread no longer waits, whatever it waited for.
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM wake_queue WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
			k.Agent, k.Resource, k.Thread); err != nil {
			return fmt.Errorf("dequeue wake of %s: %w", k, err)
		}
		run, created, err := s.openRunTx(ctx, tx, r)
		if err != nil {
			return err
		}
		res = agent.WakeResult{Outcome: agent.WakeOpened, Run: run, Created: created}
		if created && req.Budget != nil {
			return s.logWake(ctx, tx, k, append(agent.InWindow(wakes, now, req.Budget.Per), now), req.Budget.Max)
		}
		return nil
	})
	if err != nil {
		return agent.WakeResult{}, fmt.Errorf("wake %s: %w", k, err)
	}
	return res, nil
}

// wakeTurn queues k (keeping its first place: the time its oldest record began to wait,
// and its highest rank) and reports
// whether its place among the agent's waiters fits the free slots. When not, until is
// when a slot frees at the latest: the earliest lease of the agent's open wake runs.
func (s *Runs) wakeTurn(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, req agent.WakeRequest, now time.Time) (bool, time.Time, error) {
	// A waiter whose records are all gone (read, dismissed) and whose decision, if it
	// waited for one, reached it no longer needs a wake and must not hold its place.
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM wake_queue WHERE agent = ? AND NOT `+qWaiterRecords+`
		AND NOT `+qWaiterApproval), k.Agent, approvalsSince(now)); err != nil {
		return false, time.Time{}, fmt.Errorf("drop stale wake waiters of %s: %w", k.Agent, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO wake_queue (agent, resource_id, thread_id, priority_rank, queued_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET
		priority_rank = CASE WHEN excluded.priority_rank > wake_queue.priority_rank THEN excluded.priority_rank ELSE wake_queue.priority_rank END`),
		k.Agent, k.Resource, k.Thread, req.Rank, micros(req.Since)); err != nil {
		return false, time.Time{}, fmt.Errorf("queue wake of %s: %w", k, err)
	}
	var st struct {
		Open  int64         `db:"open"`
		Ahead int64         `db:"ahead"`
		Free  sql.NullInt64 `db:"free"`
	}
	err := tx.GetContext(ctx, &st, s.q(`SELECT
		(SELECT COUNT(*) FROM runs WHERE agent = ? AND origin = 'wake' AND status = 'open' AND lease_until > ?) AS open,
		(SELECT MIN(lease_until) FROM runs WHERE agent = ? AND origin = 'wake' AND status = 'open' AND lease_until > ?) AS free,
		(SELECT COUNT(*) FROM wake_queue o JOIN wake_queue me
		   ON me.agent = o.agent AND me.resource_id = ? AND me.thread_id = ?
		 WHERE o.agent = ? AND (o.priority_rank > me.priority_rank OR (o.priority_rank = me.priority_rank
		   AND (o.queued_at < me.queued_at OR (o.queued_at = me.queued_at
		   AND (o.resource_id < me.resource_id OR (o.resource_id = me.resource_id AND o.thread_id < me.thread_id))))))) AS ahead`),
		k.Agent, micros(now), k.Agent, micros(now), k.Resource, k.Thread, k.Agent)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("count wakes of %s: %w", k.Agent, err)
	}
	if st.Open+st.Ahead < int64(req.Limit) {
		return true, time.Time{}, nil
	}
	until := now.Add(queuedRetry)
	if t := fromNullMicros(st.Free); t != nil && t.Before(until) {
		until = *t
	}
	return false, until, nil
}

// Who still waits in wake_queue: a thread with pending records, or one whose decision
// waits for the wake that delivers it (an approval waiter; one argument, see
// approvalsSince). A waiter that is neither holds no place.
const (
	qWaiterRecords = `EXISTS (SELECT 1 FROM records r WHERE r.agent = wake_queue.agent AND r.resource_id = wake_queue.resource_id
		AND r.thread_id = wake_queue.thread_id AND r.status = 'pending')`
	qWaiterApproval = `EXISTS (SELECT 1 FROM approvals a WHERE a.agent = wake_queue.agent AND a.resource_id = wake_queue.resource_id
		AND a.thread_id = wake_queue.thread_id AND ` + qApprovalWaiting + `)`
)

// approvalsSince is the argument of qApprovalWaiting at now.
func approvalsSince(now time.Time) int64 { return micros(now.Add(-approval.DeliverFor)) }

// qLeaveWakeQueue runs in every completed pass (prepared on SQLite). A thread whose
// decision still waits for its wake keeps its place: the records not needing a wake
// say nothing of it.
const qLeaveWakeQueue = `DELETE FROM wake_queue WHERE agent = ? AND resource_id = ? AND thread_id = ? AND NOT ` + qWaiterApproval

// leaveWakeQueue takes k out of its agent's wake queue, unless a decision of k waits
// for its wake, and reports whether it left.
func (s *core) leaveWakeQueue(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) (bool, error) {
	res, err := s.writeTx(tx).exec(ctx, qLeaveWakeQueue, k.Agent, k.Resource, k.Thread, approvalsSince(now))
	if err != nil {
		return false, fmt.Errorf("dequeue wake of %s: %w", k, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// promoteWaiter runs when a wake run of k's agent closes: its slot goes to the first
// waiting thread that is not due already, whose records become due now. One slot, one
// waiter: the rest keep waiting instead of all racing for it. When the first is an
// approval waiter there is nothing to make due: the approvals service, told of the
// closed run (agent.WithWakeSlotHook), sends its decision, and a record waiter behind
// it finds it ahead.
func (s *core) promoteWaiter(ctx context.Context, tx *sqlx.Tx, agentID string, now time.Time) error {
	var w threadKeyRow
	err := tx.GetContext(ctx, &w, s.q(`SELECT agent, resource_id, thread_id FROM wake_queue
		WHERE agent = ? AND (`+qWaiterRecords+` OR `+qWaiterApproval+`)
		AND NOT EXISTS (SELECT 1 FROM records r WHERE r.agent = wake_queue.agent AND r.resource_id = wake_queue.resource_id
			AND r.thread_id = wake_queue.thread_id AND r.status = 'pending' AND r.due_at IS NOT NULL AND r.due_at <= ?)
		ORDER BY priority_rank DESC, queued_at, resource_id, thread_id LIMIT 1`), agentID, approvalsSince(now), micros(now))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find the next wake waiter of %s: %w", agentID, err)
	}
	// Due only makes the dispatcher look: the planner still honours each record's own
	// deliver and summary times.
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE records SET due_at = ?
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'pending' AND due_at > ?
		AND (next_attempt_at IS NULL OR next_attempt_at <= ?)`),
		micros(now), w.Agent, w.Resource, w.Thread, micros(now), micros(now)); err != nil {
		return fmt.Errorf("make the next wake waiter of %s due: %w", agentID, err)
	}
	return nil
}

func (s *core) wakeLog(ctx context.Context, q sqlx.QueryerContext, k inbox.ThreadKey) ([]time.Time, error) {
	var raw string
	err := sqlx.GetContext(ctx, q, &raw, s.q(`SELECT wake_log FROM threads WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
		k.Agent, k.Resource, k.Thread)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && raw == "") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read wake log of %s: %w", k, err)
	}
	var us []int64
	if err := json.Unmarshal([]byte(raw), &us); err != nil {
		return nil, fmt.Errorf("decode wake log of %s: %w", k, err)
	}
	out := make([]time.Time, len(us))
	for i, u := range us {
		out[i] = fromMicros(u)
	}
	return out, nil
}

// logWake stores the thread's wakes, keeping the newest max.
func (s *Runs) logWake(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, wakes []time.Time, max int) error {
	if len(wakes) > max {
		wakes = wakes[len(wakes)-max:]
	}
	us := make([]int64, len(wakes))
	for i, w := range wakes {
		us[i] = micros(w)
	}
	raw, err := json.Marshal(us)
	if err != nil {
		return fmt.Errorf("encode wake log: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE threads SET wake_log = ? WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
		string(raw), k.Agent, k.Resource, k.Thread); err != nil {
		return fmt.Errorf("log wake of %s: %w", k, err)
	}
	return nil
}

// WakeState reads k's wake log, its place in the wake queue and its agent's open wakes.
func (s *Explain) WakeState(ctx context.Context, k inbox.ThreadKey, now time.Time) (agent.WakeState, error) {
	var st agent.WakeState
	var err error
	if st.Wakes, err = s.wakeLog(ctx, s.r, k); err != nil {
		return st, err
	}
	var q sql.NullInt64
	err = s.r.GetContext(ctx, &q, s.q(`SELECT queued_at FROM wake_queue WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
		k.Agent, k.Resource, k.Thread)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("read wake queue of %s: %w", k, err)
	}
	st.QueuedAt = fromNullMicros(q)
	if err := s.r.GetContext(ctx, &st.OpenWakes, s.q(`SELECT COUNT(*) FROM runs
		WHERE agent = ? AND origin = 'wake' AND status = 'open' AND lease_until > ?`), k.Agent, micros(now)); err != nil {
		return st, fmt.Errorf("count open wakes of %s: %w", k.Agent, err)
	}
	return st, nil
}
