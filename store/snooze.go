package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
)

var _ inbox.SnoozeStore = (*Inbox)(nil)

// SnoozeRecord hides pending record id of thread k until `until`: no delivery, summary
// or backlog until the release decides it again. A record of another thread is
// inbox.ErrNotFound; one that is not pending (or is a lane's, or is due while a pass
// holds its thread) is inbox.ErrNotSnoozable, returned with the record as it is.
func (s *Records) SnoozeRecord(ctx context.Context, k inbox.ThreadKey, id string, until, now time.Time) (inbox.Record, error) {
	var out inbox.Record
	var refused bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		rec, err := s.threadRecord(ctx, tx, k, id)
		if err != nil {
			return err
		}
		// A merge reads and rewrites its record under its family's lock: taken here too,
		// a merge in flight cannot write the record back as pending.
		if err := s.lockMergeFamily(ctx, tx, rec.Thread, rec.Source, rec.Kind); err != nil {
			return err
		}
		// A pass holding the thread may be sending the record's signal this very moment
		// (its completion would then not mark it sent, and the release would send it
		// again): a due record of a leased thread is refused, as CancelMessages does.
		if err := s.lockThread(ctx, tx, k, now); err != nil {
			return err
		}
		var lease sql.NullInt64
		if err := tx.GetContext(ctx, &lease, s.q(`SELECT lease_until FROM threads WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
			k.Agent, k.Resource, k.Thread); err != nil {
			return fmt.Errorf("read the lease of thread %s: %w", k, err)
		}
		after := int64(math.MinInt64) // no live lease: any record may be snoozed
		if lease.Valid && lease.Int64 > micros(now) {
			after = micros(now) // only one not due yet
		}
		res, err := tx.ExecContext(ctx, s.q(`UPDATE records SET status = 'snoozed', snoozed_until = ?, updated_at = ?,
			due_at = NULL, lease_owner = NULL, lease_until = NULL
			WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND status = 'pending' AND net_key = ''
			AND (due_at IS NULL OR due_at > ?)`),
			micros(until), micros(now), id, k.Agent, k.Resource, k.Thread, after)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		refused = n == 0
		out, err = s.threadRecord(ctx, tx, k, id)
		return err
	})
	if err != nil {
		return inbox.Record{}, fmt.Errorf("snooze record %s: %w", id, err)
	}
	if refused {
		return out, fmt.Errorf("snooze record %s (%s): %w", id, out.Status, inbox.ErrNotSnoozable)
	}
	return out, nil
}

// threadRecord reads record id of thread k in tx, or inbox.ErrNotFound.
func (s *Records) threadRecord(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, id string) (inbox.Record, error) {
	recs, err := s.selectRecords(ctx, tx, `SELECT `+recordColumns+` FROM records
		WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ?`, id, k.Agent, k.Resource, k.Thread)
	if err != nil {
		return inbox.Record{}, err
	}
	if len(recs) == 0 {
		return inbox.Record{}, fmt.Errorf("record %s in %s: %w", id, k, inbox.ErrNotFound)
	}
	return recs[0], nil
}

// lockMergeFamily serialises, on PostgreSQL, the writers of one (thread, source, kind)
// across transactions and replicas, as ingest's merges take it.
func (s *core) lockMergeFamily(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, source, kind string) error {
	if s.driver != DriverPostgres {
		return nil // SQLite's single writer serialises already
	}
	key := strings.Join([]string{k.Agent, k.Resource, k.Thread, source, kind}, "\x1f")
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("lock merge family: %w", err)
	}
	return nil
}

// qDueSnoozed is the snoozed records due by a time, earliest first: every pass reads it.
const qDueSnoozed = `SELECT ` + recordColumns + ` FROM records
	WHERE status = 'snoozed' AND snoozed_until <= ? ORDER BY snoozed_until, id ` + limitArg

// ReleaseSnoozed releases up to limit snoozed records due by now, earliest first, each
// decided again by redecide with its thread's presence as of now. Replicas releasing at
// once each re-read a record under its family's lock and skip one that is no longer
// snoozed, so every record is released exactly once. It answers the thread of each
// record it released.
func (s *Inbox) ReleaseSnoozed(ctx context.Context, now time.Time, redecide inbox.RedecideFunc, limit int) ([]inbox.ThreadKey, error) {
	// Read first, outside a write transaction: almost every pass finds nothing due.
	var rows []recordRow
	if err := s.readSelect(ctx, &rows, qDueSnoozed, micros(now), limit); err != nil {
		return nil, fmt.Errorf("read due snoozed records: %w", err)
	}
	due, err := recordsOf(rows)
	if err != nil {
		return nil, fmt.Errorf("read due snoozed records: %w", err)
	}
	if len(due) == 0 {
		return nil, nil
	}
	var out []inbox.ThreadKey
	err = s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		out = nil
		for _, cand := range due {
			// The order ingest takes: family, thread, record.
			if err := s.lockMergeFamily(ctx, tx, cand.Thread, cand.Source, cand.Kind); err != nil {
				return err
			}
			if err := s.touchThread(ctx, tx, cand.Thread, now); err != nil {
				return err
			}
			lock := ""
			if s.driver == DriverPostgres {
				lock = ` FOR UPDATE`
			}
			recs, err := s.selectRecords(ctx, tx, `SELECT `+recordColumns+` FROM records
				WHERE id = ? AND status = 'snoozed' AND snoozed_until <= ?`+lock, cand.ID, micros(now))
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				continue // another replica released it, or an urgent merge ended its snooze
			}
			r := recs[0]
			presence, err := s.presence(ctx, s.writeTx(tx), r.Thread, now)
			if err != nil {
				return err
			}
			r.Release(redecide(r, presence, now), now)
			if err := s.updateRecord(ctx, tx, &r); err != nil {
				return err
			}
			// A new round of attempts, as for a record that just arrived.
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE records SET attempts_base = attempts, first_attempt_at = NULL
				WHERE id = ?`), r.ID); err != nil {
				return fmt.Errorf("restart the attempts of record %s: %w", r.ID, err)
			}
			out = append(out, r.Thread)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("release snoozed records: %w", err)
	}
	return out, nil
}
