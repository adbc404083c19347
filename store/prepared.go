package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
)

// The ingest path's statements, kept prepared on SQLite's single writer connection:
// modernc.org/sqlite parses the SQL of every unprepared statement again, a fifth of
// the CPU of an ingest. PostgreSQL needs no cache: pgx caches prepared statements per
// connection itself.
const (
	qInsertEvent = `INSERT INTO events
		(id, source, connector, delivery_id, type, headers, body, received_at, status, error, replay_of, records, body_digest, trace_parent, body_encoding)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qRedelivered = `UPDATE events SET redeliveries = redeliveries + 1, last_redelivered_at = ?
		WHERE source = ? AND connector = ? AND delivery_id = ? RETURNING id`
	qRedeliveredBody = `UPDATE events SET redeliveries = redeliveries + 1, last_redelivered_at = ?
		WHERE source = ? AND connector = ? AND body_digest = ? RETURNING id`
	qTouchThread = `INSERT INTO threads (agent, resource_id, thread_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET updated_at = excluded.updated_at`
	qPresence = `SELECT COUNT(*) FROM runs
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until > ?`
	qInsertRecord = `INSERT INTO records (` + recordColumns + `, priority_rank, due_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qUpdateRecord = `UPDATE records SET agent = ?, resource_id = ?, thread_id = ?, event_id = ?, route = ?,
		source = ?, kind = ?, priority = ?, summary = ?, payload = ?, dedupe_key = ?, coalesce_key = ?,
		attributes = ?, metadata = ?, deliver_as = ?, status = ?, coalesced_count = ?, action = ?, reason = ?,
		deliver_at = ?, summary_at = ?, full_when_idle = ?, attempts = ?, next_attempt_at = ?, last_error = ?,
		delivered_signal_id = ?, summary_signal_id = ?, created_at = ?, updated_at = ?, delivered_at = ?,
		net_key = ?, net_state = ?, rest_state = ?, superseded_by = ?, operator_action = ?, stream_options = ?,
		source_id = ?, last_attempt_at = ?, seen_at = ?, dismissed_at = ?, archived_at = ?, discarded_at = ?,
		snoozed_until = ?, held_by = ?, held_until = ?, trace_parent = ?, trace_links = ?, priority_rank = ?, due_at = ? WHERE id = ?`
)

// The dispatcher's completion statements (CompleteThread), prepared like the ingest's.
const (
	qThreadRelease = `UPDATE threads SET last_seq = last_seq + ?,
		last_summary_at = COALESCE(?, last_summary_at), summaries = summaries + ?,
		lease_until = CASE WHEN lease_owner = ? THEN NULL ELSE lease_until END,
		lease_owner = CASE WHEN lease_owner = ? THEN NULL ELSE lease_owner END
		WHERE agent = ? AND resource_id = ? AND thread_id = ? RETURNING last_seq`
	qThreadHold = `UPDATE threads SET last_seq = last_seq + ?,
		last_summary_at = COALESCE(?, last_summary_at), summaries = summaries + ?,
		lease_until = CASE WHEN lease_owner = ? THEN ? ELSE lease_until END
		WHERE agent = ? AND resource_id = ? AND thread_id = ? RETURNING last_seq`
	qMarkDelivered = `UPDATE records SET status = 'delivered', delivered_signal_id = ?, delivered_at = ?,
		updated_at = ?, last_attempt_at = ?, due_at = NULL, next_attempt_at = NULL, last_error = '', lease_owner = NULL, lease_until = NULL,
		attempts = CASE WHEN ? > attempts THEN ? ELSE attempts END
		WHERE id = ? AND status = 'pending' AND updated_at = ? AND coalesced_count = ?`
	// A delivered summary counts its attempt and starts the full notification's round.
	qMarkSummarized = `UPDATE records SET summary_signal_id = ?, summary_at = NULL, due_at = deliver_at, last_attempt_at = ?,
		attempts = CASE WHEN ? > attempts THEN ? ELSE attempts END,
		attempts_base = CASE WHEN ? > attempts THEN ? ELSE attempts END,
		next_attempt_at = NULL, first_attempt_at = NULL, last_error = ''
		WHERE id = ? AND status = 'pending' AND updated_at = ? AND coalesced_count = ?`
	qHoldForSummary = `UPDATE records SET action = 'summarize', reason = ?, deliver_at = NULL, full_when_idle = ?,
		summary_at = ?, due_at = ? WHERE id = ? AND status = 'pending' AND updated_at = ? AND coalesced_count = ?`
	qHoldDue = `UPDATE records SET held_by = ?, held_until = ?, reason = ?, deliver_at = NULL, summary_at = NULL,
		full_when_idle = ?, due_at = NULL, updated_at = ? WHERE id = ? AND status = 'pending' AND updated_at = ? AND coalesced_count = ?`
	qMarkSummaryID = `UPDATE records SET summary_signal_id = ? WHERE id = ? AND status = 'pending'`
	qRecordRetry   = `UPDATE records SET attempts = ?, next_attempt_at = ?, due_at = ?, last_error = ?, last_attempt_at = ?,
		first_attempt_at = COALESCE(first_attempt_at, ?) WHERE id = ? AND status = 'pending'`
	qRecordFailed = `UPDATE records SET status = 'failed', attempts = ?, last_error = ?, updated_at = ?, last_attempt_at = ?, due_at = NULL,
		next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'pending'`
	qInsertAttempt = `INSERT INTO delivery_attempts
		(agent, resource_id, thread_id, target, signal_id, record_ids, attempt, outcome, status_code, error, duration_us, attempted_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qInsertFrame = `INSERT INTO signals (` + frameColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id, id) DO NOTHING`
)

// Runs and the thread log (opening a run, a wake, a frame appended outside a pass).
const (
	qLockThread = `INSERT INTO threads (agent, resource_id, thread_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET updated_at = threads.updated_at`
	qNextSeq = `INSERT INTO threads (agent, resource_id, thread_id, last_seq, created_at, updated_at)
		VALUES (?, ?, ?, 1, ?, ?)
		ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET last_seq = threads.last_seq + 1
		RETURNING last_seq`
	qLiveRun = `SELECT ` + runColumns + ` FROM runs
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until > ?
		ORDER BY opened_at DESC, id DESC LIMIT 1`
	qLapsedRuns = `SELECT ` + runColumns + ` FROM runs
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until <= ?
		ORDER BY lease_until, id`
	qInsertRun = `INSERT INTO runs (` + runColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`
)

// rescheduleQuery moves a record's due time; trueLit is the dialect's boolean true.
func rescheduleQuery(fullWhenIdle bool, trueLit string) string {
	set := `due_at = ?`
	if fullWhenIdle {
		set += `, full_when_idle = ` + trueLit
	}
	return `UPDATE records SET ` + set + ` WHERE id = ? AND status = 'pending' AND updated_at = ? AND coalesced_count = ?`
}

// mergeQuery finds the record a notification merges into; one of three fixed shapes,
// so each can stay prepared. Its arguments are mergeArgs'. With both keys it is two
// lookups, one per key's index: `dedupe_key = ? OR coalesce_key = ?` makes SQLite
// search only the family prefix and read every pending record of the family (low ones
// stay pending until seen), on every event.
func mergeQuery(dedupe, coalesce bool) string {
	lookup := func(key string) string {
		return `SELECT ` + recordColumns + ` FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND source = ? AND kind = ? AND status IN ('pending', 'snoozed')
		AND ` + key + ` = ? AND net_key = ''`
	}
	switch {
	case dedupe && !coalesce:
		return lookup("dedupe_key") + ` ORDER BY created_at, id LIMIT 1`
	case coalesce && !dedupe:
		return lookup("coalesce_key") + ` ORDER BY created_at, id LIMIT 1`
	}
	// Each lookup picks its own oldest, so no plan walks the thread in created order.
	return `SELECT * FROM (` + lookup("dedupe_key") + ` ORDER BY created_at, id LIMIT 1) AS by_dedupe
		UNION ALL SELECT * FROM (` + lookup("coalesce_key") + ` ORDER BY created_at, id LIMIT 1) AS by_coalesce
		ORDER BY created_at, id LIMIT 1`
}

// mergeArgs are mergeQuery's arguments for n, whose keys are not both empty.
func mergeArgs(n inbox.Notification) []any {
	family := []any{n.Thread.Agent, n.Thread.Resource, n.Thread.Thread, n.Source, n.Kind}
	var args []any
	if n.DedupeKey != "" {
		args = append(append(args, family...), n.DedupeKey)
	}
	if n.CoalesceKey != "" {
		args = append(append(args, family...), n.CoalesceKey)
	}
	return args
}

func hotQueries() []string {
	return []string{qInsertEvent, qRedelivered, qRedeliveredBody, qTouchThread, qPresence, qInsertRecord, qUpdateRecord,
		mergeQuery(true, false), mergeQuery(false, true), mergeQuery(true, true),
		qThreadRelease, qThreadHold, qMarkDelivered, qMarkSummarized, qMarkSummaryID, qHoldForSummary, qHoldDue, qRecordRetry, qRecordFailed,
		qInsertAttempt, qInsertFrame, rescheduleQuery(false, "1"), rescheduleQuery(true, "1"),
		qLockThread, qNextSeq, qLiveRun, qLapsedRuns, qInsertRun, sqliteClaimQuery(), qLeaveWakeQueue}
}

// limitArg is a bound LIMIT that lets a prepared statement stay prepared: SQLite's planner
// reads the value of a bare `LIMIT ?`, so binding it again re-prepares the statement on
// every run (half of FramesAfter's CPU); an expression is evaluated when the statement runs.
const limitArg = `LIMIT ? + 0`

// Reads made for every run opened and every stream woken, prepared on the read pool.
const (
	qFramesAfter = `SELECT ` + frameColumns + ` FROM signals
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND seq > ? ORDER BY seq ` + limitArg
)

// pendingRecoveriesQuery reads a thread's in-flight signals to recover, oldest first.
func pendingRecoveriesQuery() string {
	return `SELECT ` + prefixed("s.", frameColumns) + `, r.cause FROM recoveries r
		JOIN signals s ON s.agent = r.agent AND s.resource_id = r.resource_id AND s.thread_id = r.thread_id AND s.id = r.signal_id
		WHERE r.agent = ? AND r.resource_id = ? AND r.thread_id = ?
		ORDER BY s.seq ` + limitArg
}

func hotReads() []string {
	return append([]string{qFramesAfter, pendingRecoveriesQuery(), qLapsedRunsAll, qTargetStates,
		nextDueQuery(), qLiveWatches, qOwnReply, qDueSnoozed, qHeldThreads, qLiveSilences}, workQueries()...)
}

// readSelect runs a read on the read pool, prepared when it is one of hotReads.
func (s *core) readSelect(ctx context.Context, dest any, query string, args ...any) error {
	if m := s.hot.Load(); m != nil {
		if st := (*m)[query]; st != nil {
			return st.SelectContext(ctx, dest, args...)
		}
	}
	return s.r.SelectContext(ctx, dest, s.q(query), args...)
}

// readGet is readSelect for one row.
func (s *core) readGet(ctx context.Context, dest any, query string, args ...any) error {
	if m := s.hot.Load(); m != nil {
		if st := (*m)[query]; st != nil {
			return st.GetContext(ctx, dest, args...)
		}
	}
	return s.r.GetContext(ctx, dest, s.q(query), args...)
}

// prepareHot prepares the ingest statements on the writer connection and the hot reads
// on the read pool. It runs outside
// any transaction (the writer has one connection) after migrations.
func (s *core) prepareHot(ctx context.Context) error {
	if s.driver != DriverSQLite || s.hot.Load() != nil {
		return nil
	}
	m := make(map[string]*sqlx.Stmt)
	prepare := func(db *sqlx.DB, qs []string) error {
		for _, q := range qs {
			st, err := db.PreparexContext(ctx, q)
			if err != nil {
				for _, p := range m {
					_ = p.Close()
				}
				return fmt.Errorf("prepare statement: %w", err)
			}
			m[q] = st
		}
		return nil
	}
	if err := prepare(s.w, hotQueries()); err != nil {
		return err
	}
	// On the read pool database/sql prepares a statement once per connection it runs on.
	if err := prepare(s.r, hotReads()); err != nil {
		return err
	}
	if !s.hot.CompareAndSwap(nil, &m) {
		for _, p := range m {
			_ = p.Close()
		}
	}
	return nil
}

func (s *core) closeHot() error {
	m := s.hot.Swap(nil)
	if m == nil {
		return nil
	}
	var errs []error
	for _, st := range *m {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// txq runs the ingest path's queries in one transaction, through the prepared
// statements when the transaction is on the writer.
type txq struct {
	s      *core
	tx     *sqlx.Tx
	writer bool
}

func (s *core) writeTx(tx *sqlx.Tx) txq { return txq{s: s, tx: tx, writer: true} }

func (t txq) stmt(ctx context.Context, query string) *sqlx.Stmt {
	if !t.writer {
		return nil
	}
	if m := t.s.hot.Load(); m != nil {
		if st := (*m)[query]; st != nil {
			// Within a transaction on the connection it was prepared on, database/sql
			// reuses the prepared statement instead of preparing again.
			return t.tx.StmtxContext(ctx, st)
		}
	}
	return nil
}

func (t txq) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, t.s.q(query), args...)
}

func (t txq) sel(ctx context.Context, dest any, query string, args ...any) error {
	if st := t.stmt(ctx, query); st != nil {
		return st.SelectContext(ctx, dest, args...)
	}
	return t.tx.SelectContext(ctx, dest, t.s.q(query), args...)
}

func (t txq) get(ctx context.Context, dest any, query string, args ...any) error {
	if st := t.stmt(ctx, query); st != nil {
		return st.GetContext(ctx, dest, args...)
	}
	return t.tx.GetContext(ctx, dest, t.s.q(query), args...)
}
