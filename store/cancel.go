package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// CancelMessages dismisses the message records of thread k not yet handed over (pending,
// deliverAs message or queued-message) that ids name, by record id or by the signal id
// they would be handed over under (agent.RecordSignalID), and returns the ids that named
// one, in the order given, each once. Other ids (unknown, another thread's, a notification,
// a message handed over or moved already) are left out.
//
// The thread row is locked first, so no dispatcher pass can claim the thread until this
// commits; while a pass holds the thread's lease it may be handing the messages over at
// this very moment, so then nothing is cancelled and the answer is empty: an id in the
// answer never reaches the agent.
func (s *Records) CancelMessages(ctx context.Context, k inbox.ThreadKey, ids []string, now time.Time) ([]string, error) {
	if len(ids) == 0 {
		return []string{}, nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	cancelled := map[string]bool{}
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := s.lockThread(ctx, tx, k, now); err != nil {
			return err
		}
		var lease sql.NullInt64
		if err := tx.GetContext(ctx, &lease, s.q(`SELECT lease_until FROM threads WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
			k.Agent, k.Resource, k.Thread); err != nil {
			return fmt.Errorf("read the lease of thread %s: %w", k, err)
		}
		if lease.Valid && lease.Int64 > micros(now) {
			return nil
		}
		recs, err := s.selectRecords(ctx, tx, `SELECT `+recordColumns+` FROM records
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND status = 'pending' AND deliver_as IN (?, ?)`,
			k.Agent, k.Resource, k.Thread, inbox.DeliverAsMessage, inbox.DeliverAsQueued)
		if err != nil {
			return err
		}
		for _, r := range recs {
			named := []string{r.ID, agent.RecordSignalID(r)}
			if !want[named[0]] && !want[named[1]] {
				continue
			}
			res, err := tx.ExecContext(ctx, s.q(`UPDATE records SET status = 'dismissed', updated_at = ?, due_at = NULL,
				lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'pending'`), micros(now), r.ID)
			if err != nil {
				return fmt.Errorf("dismiss message %s: %w", r.ID, err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				for _, id := range named {
					cancelled[id] = want[id]
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cancel queued messages of %s: %w", k, err)
	}
	out := []string{}
	for _, id := range ids {
		if cancelled[id] {
			out = append(out, id)
			cancelled[id] = false
		}
	}
	return out, nil
}
