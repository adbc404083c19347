package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Takeover counts the leases TakeBackLeases freed.
type Takeover struct {
	Threads   int64 // dispatcher leases on threads (passes, probes, a failed read's hold)
	Replies   int64 // replies the outbox had claimed to send
	Schedules int64 // schedule fires claimed to be sent
}

// Total is the number of leases freed.
func (t Takeover) Total() int64 { return t.Threads + t.Replies + t.Schedules }

// TakeBackLeases frees, at start, every lease an earlier process left on a SQLite
// database. The database's process lock makes this process the only one: whatever is
// leased was leased by a process that is gone (killed, crashed), and waiting out its
// leases would only hold its answers back. A reply it was sending keeps its attempts, so
// it is looked for on the platform before it is sent again; a schedule keeps its claimed
// fire, so that fire goes out again under the same id.
//
// On PostgreSQL leases are how replicas share work: another replica may be holding
// them, so this does nothing.
func (s *DB) TakeBackLeases(ctx context.Context) (Takeover, error) {
	var t Takeover
	if s.driver != DriverSQLite {
		return t, nil
	}
	if err := s.writable("take back leases"); err != nil {
		return t, err
	}
	if s.lock == nil {
		// An in-memory database is this process's alone already, and has no earlier one.
		return t, nil
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		for _, u := range []struct {
			n     *int64
			query string
		}{
			{&t.Threads, `UPDATE threads SET lease_owner = NULL, lease_until = NULL WHERE lease_until IS NOT NULL`},
			{&t.Replies, `UPDATE replies SET lease_owner = '', lease_until = NULL WHERE lease_until IS NOT NULL`},
			{&t.Schedules, `UPDATE schedules SET claim_until = NULL WHERE claim_until IS NOT NULL`},
		} {
			res, err := tx.ExecContext(ctx, u.query)
			if err != nil {
				return err
			}
			if *u.n, err = res.RowsAffected(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Takeover{}, fmt.Errorf("take back the leases of an earlier process: %w", err)
	}
	return t, nil
}
