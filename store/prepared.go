package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// The ingest path's statements, kept prepared on SQLite's single writer connection:
// modernc.org/sqlite parses the SQL of every unprepared statement again, a fifth of
// the CPU of an ingest. PostgreSQL needs no cache: pgx caches prepared statements per
// connection itself.
const (
	qInsertEvent = `INSERT INTO events
		(id, source, connector, delivery_id, type, headers, body, received_at, status, error, replay_of, records, body_digest)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qRedelivered = `UPDATE events SET redeliveries = redeliveries + 1, last_redelivered_at = ?
		WHERE source = ? AND connector = ? AND delivery_id = ? RETURNING id`
	qRedeliveredBody = `UPDATE events SET redeliveries = redeliveries + 1, last_redelivered_at = ?
		WHERE source = ? AND connector = ? AND body_digest = ? RETURNING id`
	qTouchThread = `INSERT INTO threads (agent, resource_id, thread_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET updated_at = excluded.updated_at`
	qPresence = `SELECT COUNT(*) FROM runs
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until > ?`
	qInsertRecord = `INSERT INTO records (` + recordColumns + `, priority_rank, due_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qUpdateRecord = `UPDATE records SET agent = ?, resource_id = ?, thread_id = ?, event_id = ?, route = ?,
		source = ?, kind = ?, priority = ?, summary = ?, payload = ?, dedupe_key = ?, coalesce_key = ?,
		attributes = ?, metadata = ?, deliver_as = ?, status = ?, coalesced_count = ?, action = ?, reason = ?,
		deliver_at = ?, summary_at = ?, full_when_idle = ?, attempts = ?, next_attempt_at = ?, last_error = ?,
		delivered_signal_id = ?, summary_signal_id = ?, created_at = ?, updated_at = ?, delivered_at = ?,
		priority_rank = ?, due_at = ? WHERE id = ?`
)

// mergeQuery finds the record a notification merges into; one of three fixed shapes,
// so each can stay prepared.
func mergeQuery(dedupe, coalesce bool) string {
	keys := "dedupe_key = ? OR coalesce_key = ?"
	switch {
	case dedupe && !coalesce:
		keys = "dedupe_key = ?"
	case coalesce && !dedupe:
		keys = "coalesce_key = ?"
	}
	return `SELECT ` + recordColumns + ` FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND source = ? AND kind = ? AND status = 'pending'
		AND (` + keys + `) ORDER BY created_at, id LIMIT 1`
}

func hotQueries() []string {
	return []string{qInsertEvent, qRedelivered, qRedeliveredBody, qTouchThread, qPresence, qInsertRecord, qUpdateRecord,
		mergeQuery(true, false), mergeQuery(false, true), mergeQuery(true, true)}
}

// prepareHot prepares the ingest statements on the writer connection. It runs outside
// any transaction (the writer has one connection) after migrations.
func (s *Store) prepareHot(ctx context.Context) error {
	if s.driver != DriverSQLite || s.hot.Load() != nil {
		return nil
	}
	m := make(map[string]*sqlx.Stmt)
	for _, q := range hotQueries() {
		st, err := s.w.PreparexContext(ctx, q)
		if err != nil {
			for _, p := range m {
				_ = p.Close()
			}
			return fmt.Errorf("prepare statement: %w", err)
		}
		m[q] = st
	}
	if !s.hot.CompareAndSwap(nil, &m) {
		for _, p := range m {
			_ = p.Close()
		}
	}
	return nil
}

func (s *Store) closeHot() error {
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
	s      *Store
	tx     *sqlx.Tx
	writer bool
}

func (s *Store) writeTx(tx *sqlx.Tx) txq { return txq{s: s, tx: tx, writer: true} }

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

func (t txq) get(ctx context.Context, dest any, query string, args ...any) error {
	if st := t.stmt(ctx, query); st != nil {
		return st.GetContext(ctx, dest, args...)
	}
	return t.tx.GetContext(ctx, dest, t.s.q(query), args...)
}
