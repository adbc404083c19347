package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

var _ delivery.Queue = (*Queue)(nil)

type threadKeyRow struct {
	Agent    string `db:"agent"`
	Resource string `db:"resource_id"`
	Thread   string `db:"thread_id"`
}

// ClaimThreads leases up to limit threads with due records and no live lease, earliest
// due first. PostgreSQL skips rows other replicas are claiming (FOR UPDATE SKIP LOCKED);
// SQLite serialises writers, so the UPDATE … RETURNING in its immediate transaction is
// already exclusive.
func (s *Queue) ClaimThreads(ctx context.Context, owner string, now, until time.Time, limit int) ([]inbox.ThreadKey, error) {
	var query string
	if s.driver == DriverPostgres {
		query = `UPDATE threads SET lease_owner = ?, lease_until = ?
			WHERE (agent, resource_id, thread_id) IN (
				SELECT t.agent, t.resource_id, t.thread_id FROM threads t
				JOIN (SELECT agent, resource_id, thread_id, MIN(due_at) AS due FROM records
				      WHERE status = 'pending' AND due_at IS NOT NULL AND due_at <= ?
				      GROUP BY agent, resource_id, thread_id) d
				  ON d.agent = t.agent AND d.resource_id = t.resource_id AND d.thread_id = t.thread_id
				WHERE (t.lease_until IS NULL OR t.lease_until <= ?) AND ` + notDown("t") + `
				ORDER BY d.due LIMIT ?
				FOR UPDATE OF t SKIP LOCKED)
			RETURNING agent, resource_id, thread_id`
	} else {
		query = sqliteClaimQuery()
	}
	var rows []threadKeyRow
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		return s.writeTx(tx).sel(ctx, &rows, query, owner, micros(until), micros(now), micros(now), limit)
	})
	if err != nil {
		return nil, fmt.Errorf("claim due threads: %w", err)
	}
	out := make([]inbox.ThreadKey, len(rows))
	for i, r := range rows {
		out[i] = inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread}
	}
	return out, nil
}

// RenewThread extends owner's lease of k. Whoever claimed or released the thread since
// changed its owner, so the owner alone says the lease is still this pass's.
func (s *Queue) RenewThread(ctx context.Context, owner string, k inbox.ThreadKey, until time.Time) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		r, err := s.writeTx(tx).exec(ctx, `UPDATE threads SET lease_until = ?
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND lease_owner = ?`, micros(until), k.Agent, k.Resource, k.Thread, owner)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("renew the lease of thread %s: %w", k, err)
	}
	return n == 1, nil
}

// sqliteClaimQuery is ClaimThreads on SQLite (prepared on the writer). Walking the due
// index in order and keeping each thread's first row stops after limit threads; grouping
// (MIN(due_at) per thread) would read every due record, a cost per pass that grows with
// the backlog.
func sqliteClaimQuery() string {
	return `UPDATE threads SET lease_owner = ?, lease_until = ?
		WHERE (agent, resource_id, thread_id) IN (
			SELECT DISTINCT r.agent, r.resource_id, r.thread_id FROM records r
			JOIN threads t ON t.agent = r.agent AND t.resource_id = r.resource_id AND t.thread_id = r.thread_id
			WHERE r.status = 'pending' AND r.due_at IS NOT NULL AND r.due_at <= ?
			  AND (t.lease_until IS NULL OR t.lease_until <= ?) AND ` + notDown("t") + `
			ORDER BY r.due_at ` + limitArg + `)
		RETURNING agent, resource_id, thread_id`
}

// ThreadWork reads one claimed thread (see ThreadsWork).
func (s *Queue) ThreadWork(ctx context.Context, k inbox.ThreadKey, now time.Time, limit int) (delivery.Work, error) {
	ws, err := s.ThreadsWork(ctx, []inbox.ThreadKey{k}, now, limit)
	if err != nil {
		return delivery.Work{Thread: k}, err
	}
	return ws[0], nil
}

// workSizes are the key counts ThreadsWork's statements are written for: a batch is
// padded up to the next size with a key no thread has, so each statement's text is one
// of a few, prepared once, instead of new SQL (parsed again) for every pass.
func workSizes() []int { return []int{1, 8, 64, 256} }

// ThreadsWork reads claimed threads: their live runs, summary pacing and up to limit due
// records each, in three statements for all of them, not three per thread: a pass over
// many threads costs about what a pass over one does.
func (s *Queue) ThreadsWork(ctx context.Context, keys []inbox.ThreadKey, now time.Time, limit int) ([]delivery.Work, error) {
	out := make([]delivery.Work, len(keys))
	at := make(map[inbox.ThreadKey]int, len(keys))
	for i, k := range keys {
		out[i].Thread = k
		at[k] = i
	}
	seen := make([]bool, len(keys))
	sizes := workSizes()
	chunk := sizes[len(sizes)-1]
	for lo := 0; lo < len(keys); lo += chunk {
		if err := s.readWork(ctx, keys[lo:min(lo+chunk, len(keys))], now, limit, out, at, seen); err != nil {
			return nil, err
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("read thread %s: %w", keys[i], sql.ErrNoRows)
		}
	}
	return out, nil
}

// claimedKeys is a CTE naming n threads: joined first, it lets each statement use the
// per-thread indexes for every thread (a row-value IN list makes SQLite scan).
func claimedKeys(n int) string {
	var b strings.Builder
	b.WriteString(`WITH k (agent, resource_id, thread_id) AS (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(`, `)
		}
		b.WriteString(`(?, ?, ?)`)
	}
	b.WriteString(`) `)
	return b.String()
}

func workThreadsQuery(n int) string {
	return claimedKeys(n) + `SELECT t.agent, t.resource_id, t.thread_id, t.created_at, t.last_summary_at, t.summaries
		FROM k JOIN threads t ON t.agent = k.agent AND t.resource_id = k.resource_id AND t.thread_id = k.thread_id`
}

// workRunsQuery reads the live runs of n threads, newest first, as liveRun picks them.
func workRunsQuery(n int) string {
	return claimedKeys(n) + `SELECT r.agent, r.resource_id, r.thread_id, r.id
		FROM k JOIN runs r ON r.agent = k.agent AND r.resource_id = k.resource_id AND r.thread_id = k.thread_id
		WHERE r.status = 'open' AND r.lease_until > ? ORDER BY r.opened_at DESC, r.id DESC`
}

// summaryReadBudget bounds the records a pass reads beyond its per-thread limit, across
// its threads, so what a thread accumulated (a silence's release) goes in one summary.
const summaryReadBudget = 10000

// workRecordsQuery reads up to a bound number of due records per thread of n threads,
// and past that bound up to a second one more that are due for the thread's summary
// only (without their payloads: a summary lists them, never sends them in full), so one
// summary tells what a thread accumulated rather than a limit's worth per interval.
func workRecordsQuery(n int) string {
	cols := strings.Replace(recordReadColumns, "summary, payload,", "summary, CASE WHEN rn <= ? THEN payload END AS payload,", 1)
	return claimedKeys(n) + `SELECT ` + cols + ` FROM (
		SELECT r.*, ROW_NUMBER() OVER (PARTITION BY r.agent, r.resource_id, r.thread_id
			ORDER BY r.priority_rank DESC, r.created_at, r.id) AS rn
		FROM k JOIN records r ON r.agent = k.agent AND r.resource_id = k.resource_id AND r.thread_id = k.thread_id
		WHERE r.status = 'pending' AND r.due_at IS NOT NULL AND r.due_at <= ?) d
		WHERE rn <= ? OR (rn <= ? AND summary_at IS NOT NULL AND summary_at <= ? AND (deliver_at IS NULL OR deliver_at > ?)
			AND NOT full_when_idle AND next_attempt_at IS NULL AND deliver_as = '' AND action <> 'queue')
		ORDER BY agent, resource_id, thread_id, priority_rank DESC, created_at, id`
}

func workQueries() []string {
	var out []string
	for _, n := range workSizes() {
		out = append(out, workThreadsQuery(n), workRunsQuery(n), workRecordsQuery(n))
	}
	return out
}

func (s *Queue) readWork(ctx context.Context, keys []inbox.ThreadKey, now time.Time, limit int,
	out []delivery.Work, at map[inbox.ThreadKey]int, seen []bool) error {
	n := len(keys)
	for _, size := range workSizes() {
		if size >= n {
			n = size
			break
		}
	}
	kargs := make([]any, 0, 3*n)
	for _, k := range keys {
		kargs = append(kargs, k.Agent, k.Resource, k.Thread)
	}
	for len(kargs) < 3*n {
		kargs = append(kargs, "", "", "") // no thread has an empty agent
	}
	var ths []struct {
		threadKeyRow
		CreatedAt     int64         `db:"created_at"`
		LastSummaryAt sql.NullInt64 `db:"last_summary_at"`
		Summaries     int64         `db:"summaries"`
	}
	if err := s.readSelect(ctx, &ths, workThreadsQuery(n), kargs...); err != nil {
		return fmt.Errorf("read claimed threads: %w", err)
	}
	for _, th := range ths {
		i := at[th.key()]
		w := &out[i]
		w.CreatedAt, w.LastSummaryAt, w.Summaries = fromMicros(th.CreatedAt), fromNullMicros(th.LastSummaryAt), th.Summaries
		seen[i] = true
	}
	var runs []struct {
		threadKeyRow
		ID string `db:"id"`
	}
	if err := s.readSelect(ctx, &runs, workRunsQuery(n), append(kargs, micros(now))...); err != nil {
		return fmt.Errorf("read live runs of claimed threads: %w", err)
	}
	for _, r := range runs {
		if w := &out[at[r.key()]]; w.RunID == "" {
			w.RunID = r.ID
		}
	}
	var rows []recordRow
	extra := limit + summaryReadBudget/len(keys)
	if err := s.readSelect(ctx, &rows, workRecordsQuery(n), append(kargs, limit, micros(now), limit, extra,
		micros(now), micros(now))...); err != nil {
		return fmt.Errorf("read due records of claimed threads: %w", err)
	}
	recs, err := recordsOf(rows)
	if err != nil {
		return err
	}
	for _, r := range recs {
		w := &out[at[r.Thread]]
		w.Records = append(w.Records, r)
	}
	return nil
}

func (r threadKeyRow) key() inbox.ThreadKey {
	return inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread}
}

// CompleteThread applies a pass in one transaction: the thread row first (pacing, lease),
// then the log frames of the accepted signals, the records, then the attempt log. An
// empty owner holds no lease and changes none. Record updates that depend on what the
// pass saw are guarded by (updated_at, coalesced_count), which every merge changes, so
// content merged in meanwhile is never marked sent.
func (s *Queue) CompleteThread(ctx context.Context, owner string, o delivery.Outcome) error {
	_, err := s.CompleteThreadFrames(ctx, owner, o)
	return err
}

// CompleteThreadFrames is CompleteThread returning the frames it logged, as a read of the
// log would give them, once the commit is durable: live subscribers take them from memory.
func (s *Queue) CompleteThreadFrames(ctx context.Context, owner string, o delivery.Outcome) ([]agent.Frame, error) {
	var logged []agent.Frame
	err := s.inRecordTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		logged = logged[:0] // a retried transaction logs afresh
		return s.completeTx(ctx, tx, owner, o, &logged)
	})
	if err != nil {
		return nil, fmt.Errorf("complete pass over %s: %w", o.Thread, err)
	}
	return logged, nil
}

func (s *Queue) completeTx(ctx context.Context, tx *sqlx.Tx, owner string, o delivery.Outcome, logged *[]agent.Frame) error {
	k := o.Thread
	now := micros(o.Now)
	bump := 0
	if o.SummaryAt != nil {
		bump = 1
	}
	w := s.writeTx(tx)
	// Only our own lease is released (or held); a lease that lapsed and was taken over
	// belongs to its new owner.
	update, leaseArgs := qThreadRelease, []any{owner, owner}
	if o.HoldUntil != nil {
		update, leaseArgs = qThreadHold, []any{owner, micros(*o.HoldUntil)}
	}
	// The same statement takes the seqs of the pass's frames.
	args := append([]any{len(o.Frames), nullMicros(o.SummaryAt), bump}, leaseArgs...)
	args = append(args, k.Agent, k.Resource, k.Thread)
	var last int64
	err := w.get(ctx, &last, update, args...)
	if errors.Is(err, sql.ErrNoRows) {
		// A signal sent through the API to a thread nothing else touched yet.
		if err = s.lockThread(ctx, tx, k, o.Now); err == nil {
			err = w.get(ctx, &last, update, args...)
		}
	}
	if err != nil {
		return fmt.Errorf("update thread %s: %w", k, err)
	}
	for i, f := range o.Frames {
		// A signal id logged before (a sender repeating its own id) stays once; its seq
		// becomes a gap.
		f.Seq = last - int64(len(o.Frames)-1-i)
		row, inserted, err := s.insertFrameRowTx(ctx, tx, f)
		if err != nil {
			return err
		}
		if inserted {
			lf, err := row.logged()
			if err != nil {
				return err
			}
			*logged = append(*logged, lf)
		}
	}
	for _, d := range o.Delivered {
		// attempts counts the one that succeeded; a pass that knows none keeps the count.
		res, err := w.exec(ctx, qMarkDelivered, d.SignalID, now, now, now, d.Attempts, d.Attempts, d.RecordID, micros(d.UpdatedAt), d.Coalesced)
		if err != nil {
			return fmt.Errorf("mark record %s delivered: %w", d.RecordID, err)
		}
		if d.NetKey != "" {
			if err := s.deliveredNet(ctx, tx, k, d, res, o.Now); err != nil {
				return err
			}
		}
	}
	for _, d := range o.Summarized {
		// Summarised records stay pending (they keep absorbing duplicates); their summary
		// is done unless a merge asked for a new one meanwhile.
		res, err := w.exec(ctx, qMarkSummarized, d.SignalID, now, d.Attempts, d.Attempts, d.Attempts, d.Attempts,
			d.RecordID, micros(d.UpdatedAt), d.Coalesced)
		if err != nil {
			return fmt.Errorf("mark record %s summarised: %w", d.RecordID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := w.exec(ctx, qMarkSummaryID, d.SignalID, d.RecordID); err != nil {
				return fmt.Errorf("mark record %s summarised: %w", d.RecordID, err)
			}
		}
	}
	for _, f := range o.Failures {
		query := qRecordRetry
		args := []any{f.Attempts, nullMicros(f.NextAttemptAt), nullMicros(f.NextAttemptAt), f.Error, now, micros(f.FirstAttemptAt), f.RecordID}
		if f.Failed {
			query = qRecordFailed
			args = []any{f.Attempts, f.Error, now, now, f.RecordID}
		}
		if _, err := w.exec(ctx, query, args...); err != nil {
			return fmt.Errorf("record failure of %s: %w", f.RecordID, err)
		}
	}
	for _, r := range o.Reschedules {
		if _, err := w.exec(ctx, rescheduleQuery(r.FullWhenIdle, s.trueLit()),
			nullMicros(r.DueAt), r.RecordID, micros(r.UpdatedAt), r.Coalesced); err != nil {
			return fmt.Errorf("reschedule record %s: %w", r.RecordID, err)
		}
	}
	if !o.WakeQueued && owner != "" {
		// A pass that did not find the thread waiting for a wake slot ends its wait: it
		// was woken (the wake dequeued it), or needs no wake now (the agent opened a run,
		// the records went), and then its turn passes to the next waiter.
		left, err := s.leaveWakeQueue(ctx, tx, k, o.Now)
		if err != nil {
			return err
		}
		if left {
			if err := s.promoteWaiter(ctx, tx, k.Agent, o.Now); err != nil {
				return err
			}
		}
	}
	for _, h := range o.Holds {
		// Held for the next summary: no full notification, no wait for idle.
		if _, err := w.exec(ctx, qHoldForSummary, cleanText(h.Reason), false, now, now, h.RecordID, micros(h.UpdatedAt), h.Coalesced); err != nil {
			return fmt.Errorf("hold record %s for a summary: %w", h.RecordID, err)
		}
	}
	for _, h := range o.Held {
		until, err := s.capSilenceHold(ctx, tx, h.Hold.By, &h.Hold.Until)
		if err != nil {
			return err
		}
		// Unless a merge changed the record since it was read (that merge decided with
		// the holds as they were then).
		if _, err := w.exec(ctx, qHoldDue, cleanText(h.Hold.By), micros(*until), cleanText(h.Reason), false, now,
			h.RecordID, micros(h.UpdatedAt), h.Coalesced); err != nil {
			return fmt.Errorf("hold record %s: %w", h.RecordID, err)
		}
	}
	if len(o.Summarized)+len(o.Reschedules)+len(o.Failures) > 0 {
		// The pass planned with the presence it read; a run that closed since (its
		// CloseRun waited on our thread lock) must still release what waits for idle,
		// which the updates above may have unscheduled.
		if _, err := s.promoteIfIdle(ctx, tx, k, o.Now); err != nil {
			return err
		}
	}
	if err := s.recoveredTx(ctx, tx, k, o.Recovered); err != nil {
		return err
	}
	return s.insertAttempts(ctx, tx, o.Attempts)
}

// NextDue is the earliest of: an unleased thread's next due record (of a target that is
// up), a down target's next probe, a live thread lease lapsing (its owner may have
// crashed), an open run's lease lapsing, a snooze or a hold ending.
func (s *Queue) NextDue(ctx context.Context, now time.Time) (*time.Time, error) {
	// One statement, one read: the dispatcher makes it whenever it goes idle.
	var rows []struct {
		Due    sql.NullInt64 `db:"due"`
		Lease  sql.NullInt64 `db:"lease"`
		Run    sql.NullInt64 `db:"run"`
		Probe  sql.NullInt64 `db:"probe"`
		Snooze sql.NullInt64 `db:"snooze"`
		Held   sql.NullInt64 `db:"held"`
	}
	if err := s.readSelect(ctx, &rows, nextDueQuery(), micros(now), micros(now), micros(now), micros(now), micros(now)); err != nil {
		return nil, fmt.Errorf("read next due time: %w", err)
	}
	var out *time.Time
	for _, r := range rows {
		for _, v := range []sql.NullInt64{r.Due, r.Lease, r.Run, r.Probe, r.Snooze, r.Held} {
			if t := fromNullMicros(v); t != nil && (out == nil || t.Before(*out)) {
				out = t
			}
		}
	}
	return out, nil
}

// nextDueQuery reads NextDue's five times. A probe due now was claimed (and moved on) by
// the pass before this; one still in the past belongs to an agent no longer configured
// and must not spin the loop. A snooze already over was released by the pass before.
func nextDueQuery() string {
	return `SELECT
		(SELECT r.due_at FROM records r
			WHERE r.status = 'pending' AND r.due_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.agent = r.agent AND t.resource_id = r.resource_id
				AND t.thread_id = r.thread_id AND t.lease_until > ?) AND ` + notDown("r") + `
			ORDER BY r.due_at LIMIT 1) AS due,
		(SELECT MIN(lease_until) FROM threads WHERE lease_until > ?) AS lease,
		(SELECT MIN(lease_until) FROM runs WHERE status = 'open') AS run,
		(SELECT MIN(next_probe_at) FROM targets WHERE state = 'down' AND next_probe_at > ?) AS probe,
		(SELECT MIN(snoozed_until) FROM records WHERE status = 'snoozed' AND snoozed_until > ?) AS snooze,
		(SELECT MIN(held_until) FROM records WHERE status = 'pending' AND held_until IS NOT NULL AND held_until > ?) AS held`
}

func (s *Queue) insertAttempts(ctx context.Context, tx *sqlx.Tx, attempts []delivery.Attempt) error {
	for _, a := range attempts {
		ids := a.RecordIDs
		if ids == nil {
			ids = []string{}
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("encode record ids: %w", err)
		}
		_, err = s.writeTx(tx).exec(ctx, qInsertAttempt, a.Thread.Agent, a.Thread.Resource, a.Thread.Thread, a.Target, a.SignalID, string(idsJSON), a.Attempt,
			a.Outcome, a.StatusCode, cleanText(a.Error), a.Duration.Microseconds(), micros(a.At))
		if err != nil {
			return fmt.Errorf("log delivery attempt: %w", err)
		}
	}
	return nil
}

type attemptRow struct {
	ID          int64  `db:"id"`
	Agent       string `db:"agent"`
	Resource    string `db:"resource_id"`
	Thread      string `db:"thread_id"`
	Target      string `db:"target"`
	SignalID    string `db:"signal_id"`
	RecordIDs   string `db:"record_ids"`
	Attempt     int    `db:"attempt"`
	Outcome     string `db:"outcome"`
	StatusCode  int    `db:"status_code"`
	Error       string `db:"error"`
	DurationUS  int64  `db:"duration_us"`
	AttemptedAt int64  `db:"attempted_at"`
}

// ListAttempts returns attempt log rows, newest first.
func (s *Admin) ListAttempts(ctx context.Context, f delivery.AttemptFilter) ([]delivery.Attempt, error) {
	query := `SELECT id, agent, resource_id, thread_id, target, signal_id, record_ids, attempt, outcome, status_code,
		error, duration_us, attempted_at FROM delivery_attempts WHERE 1 = 1`
	var args []any
	if f.Thread != nil {
		query += ` AND agent = ? AND resource_id = ? AND thread_id = ?`
		args = append(args, f.Thread.Agent, f.Thread.Resource, f.Thread.Thread)
	}
	if f.SignalID != "" {
		query += ` AND signal_id = ?`
		args = append(args, f.SignalID)
	}
	if f.RecordID != "" {
		// record_ids is a JSON array of quoted ids; ids never contain quotes.
		query += ` AND record_ids LIKE ?`
		args = append(args, `%"`+f.RecordID+`"%`)
	}
	if f.BeforeID > 0 {
		query += ` AND id < ?`
		args = append(args, f.BeforeID)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	var rows []attemptRow
	if err := s.r.SelectContext(ctx, &rows, s.q(query), args...); err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	out := make([]delivery.Attempt, 0, len(rows))
	for _, r := range rows {
		a := delivery.Attempt{ID: r.ID, Thread: inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread},
			Target: r.Target, SignalID: r.SignalID, Attempt: r.Attempt, Outcome: r.Outcome, StatusCode: r.StatusCode,
			Error: r.Error, Duration: time.Duration(r.DurationUS) * time.Microsecond, At: fromMicros(r.AttemptedAt)}
		if err := json.Unmarshal([]byte(r.RecordIDs), &a.RecordIDs); err != nil {
			return nil, fmt.Errorf("decode record ids of attempt %d: %w", r.ID, err)
		}
		out = append(out, a)
	}
	return out, nil
}
