package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
)

var _ inbox.HoldStore = (*Inbox)(nil)

// heldDue is the held records of one thread whose hold has ended by a time.
const heldDue = `FROM records WHERE agent = ? AND resource_id = ? AND thread_id = ?
	AND status = 'pending' AND held_until IS NOT NULL AND held_until <= ?`

// qHeldThreads is the threads with a hold ended by a time: every pass reads it.
const qHeldThreads = `SELECT DISTINCT agent, resource_id, thread_id FROM records
	WHERE status = 'pending' AND held_until IS NOT NULL AND held_until <= ? ORDER BY agent, resource_id, thread_id ` + limitArg

// ReleaseHeld releases the records of up to limit threads whose hold ended by now, each
// thread in one transaction: its families and thread are locked in the order ingest
// takes them, its ended holds read again under those locks (a replica that released
// them first leaves none), each decided again by redecide with the thread's presence,
// and the lot collapsed into one summary (inbox.CollapseReleased). It answers the
// thread of each record it released.
func (s *Inbox) ReleaseHeld(ctx context.Context, now time.Time, redecide inbox.RedecideFunc, limit int) ([]inbox.ThreadKey, error) {
	// Read first, outside a write transaction: almost every pass finds nothing ended.
	var threads []threadKeyRow
	if err := s.readSelect(ctx, &threads, qHeldThreads, micros(now), limit); err != nil {
		return nil, fmt.Errorf("read threads with ended holds: %w", err)
	}
	var out []inbox.ThreadKey
	for _, t := range threads {
		k := inbox.ThreadKey{Agent: t.Agent, Resource: t.Resource, Thread: t.Thread}
		n, err := s.releaseThreadHolds(ctx, k, now, redecide)
		if err != nil {
			return out, fmt.Errorf("release the held records of %s: %w", k, err)
		}
		for range n {
			out = append(out, k)
		}
	}
	return out, nil
}

type family struct {
	Source string `db:"source"`
	Kind   string `db:"kind"`
}

func (s *Inbox) releaseThreadHolds(ctx context.Context, k inbox.ThreadKey, now time.Time, redecide inbox.RedecideFunc) (int, error) {
	n := 0
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		n = 0
		var fams []family
		if err := sqlx.SelectContext(ctx, tx, &fams, s.q(`SELECT DISTINCT source, kind `+heldDue+` ORDER BY source, kind`),
			k.Agent, k.Resource, k.Thread, micros(now)); err != nil {
			return fmt.Errorf("read families: %w", err)
		}
		// The order ingest takes: families (sorted, so two releases cannot cross), thread,
		// records.
		for _, f := range fams {
			if err := s.lockMergeFamily(ctx, tx, k, f.Source, f.Kind); err != nil {
				return err
			}
		}
		if err := s.touchThread(ctx, tx, k, now); err != nil {
			return err
		}
		lock := ""
		if s.driver == DriverPostgres {
			lock = ` FOR UPDATE`
		}
		recs, err := s.selectRecords(ctx, tx, `SELECT `+recordColumns+` `+heldDue+` ORDER BY created_at, id`+lock,
			k.Agent, k.Resource, k.Thread, micros(now))
		if err != nil {
			return err
		}
		// A family that gained its first ended hold after the read above is not locked:
		// its records wait for the next pass.
		recs = slices.DeleteFunc(recs, func(r inbox.Record) bool {
			return !slices.Contains(fams, family{r.Source, r.Kind})
		})
		if len(recs) == 0 {
			return nil // another replica released them
		}
		presence, err := s.presence(ctx, s.writeTx(tx), k, now)
		if err != nil {
			return err
		}
		for i := range recs {
			recs[i].Release(redecide(recs[i], presence, now), now)
		}
		inbox.CollapseReleased(recs, now)
		for i := range recs {
			if err := s.updateRecord(ctx, tx, &recs[i]); err != nil {
				return err
			}
		}
		n = len(recs)
		return nil
	})
	return n, err
}
