package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// ListThreadRecords lists a thread's records for its agent's inbox: filtered by status,
// source, kind and a case-insensitive substring of summary, kind or source, newest first (or oldest
// first), continuing after a cursor.
func (s *Records) ListThreadRecords(ctx context.Context, q agent.RecordQuery) ([]inbox.Record, error) {
	k := q.Thread
	query := `SELECT ` + recordColumns + ` FROM records WHERE agent = ? AND resource_id = ? AND thread_id = ?`
	args := []any{k.Agent, k.Resource, k.Thread}
	if len(q.Statuses) > 0 {
		in, inArgs, err := sqlx.In(` AND status IN (?)`, q.Statuses)
		if err != nil {
			return nil, fmt.Errorf("list records: %w", err)
		}
		query += in
		args = append(args, inArgs...)
	}
	priorities := make([]string, len(q.Priorities))
	for i, p := range q.Priorities {
		priorities[i] = string(p)
	}
	for _, f := range []struct {
		col  string
		vals []string
	}{{"source", q.Sources}, {"kind", q.Kinds}, {"priority", priorities}} {
		if len(f.vals) == 0 {
			continue
		}
		in, inArgs, err := sqlx.In(` AND `+f.col+` IN (?)`, f.vals)
		if err != nil {
			return nil, fmt.Errorf("list records: %w", err)
		}
		query += in
		args = append(args, inArgs...)
	}
	if q.Search != "" {
		pat := "%" + escapeLike(strings.ToLower(q.Search)) + "%"
		query += ` AND (LOWER(summary) LIKE ? ESCAPE '\' OR LOWER(kind) LIKE ? ESCAPE '\' OR LOWER(source) LIKE ? ESCAPE '\')`
		args = append(args, pat, pat, pat)
	}
	order, cmp := `DESC`, `<`
	if q.Oldest {
		order, cmp = `ASC`, `>`
	}
	if q.After != nil {
		at := micros(q.After.CreatedAt)
		query += ` AND (created_at ` + cmp + ` ? OR (created_at = ? AND id ` + cmp + ` ?))`
		args = append(args, at, at, q.After.ID)
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	query += ` ORDER BY created_at ` + order + `, id ` + order + ` LIMIT ?`
	args = append(args, q.Limit)
	return s.selectRecords(ctx, s.r, query, args...)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ThreadRecordsByID returns those of ids that belong to thread k, in the order given.
func (s *Records) ThreadRecordsByID(ctx context.Context, k inbox.ThreadKey, ids []string) ([]inbox.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	in, inArgs, err := sqlx.In(`SELECT `+recordColumns+` FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND id IN (?)`, k.Agent, k.Resource, k.Thread, ids)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	recs, err := s.selectRecords(ctx, s.r, in, inArgs...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]inbox.Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := make([]inbox.Record, 0, len(recs))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
			delete(byID, id)
		}
	}
	return out, nil
}

// MarkSeen moves those of ids still pending, snoozed or delivered to seen: the agent has looked at
// them, so a pending one is no longer dispatched. A pending record of a net-state lane
// read so has told the model its state.
func (s *Records) MarkSeen(ctx context.Context, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		told, err := s.pendingNet(ctx, tx, ids, now)
		if err != nil {
			return err
		}
		in, args, err := sqlx.In(`UPDATE records SET status = 'seen', updated_at = ?, seen_at = COALESCE(seen_at, ?), due_at = NULL,
			snoozed_until = NULL, lease_owner = NULL, lease_until = NULL
			WHERE id IN (?) AND status IN ('pending', 'snoozed', 'delivered')`, micros(now), micros(now), ids)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(in), args...); err != nil {
			return err
		}
		return s.tellRecords(ctx, tx, told, now)
	})
	if err != nil {
		return fmt.Errorf("mark records seen: %w", err)
	}
	return nil
}

// TransitionRecord moves record id of thread k to status `to` if its status is one of
// from, clearing its schedule. changed is false when it was not in one of from (the
// record is returned as it is); a record of another thread is inbox.ErrNotFound.
func (s *Records) TransitionRecord(ctx context.Context, k inbox.ThreadKey, id string, to inbox.Status, from []inbox.Status, now time.Time) (inbox.Record, bool, error) {
	var out inbox.Record
	var changed bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var told []netRecord
		if to == inbox.StatusSeen {
			var err error
			if told, err = s.pendingNet(ctx, tx, []string{id}, now); err != nil {
				return err
			}
		}
		stamp := ""
		if col := statusStamp(to); col != "" {
			stamp = col + ` = COALESCE(` + col + `, ?), `
		}
		in, args, err := sqlx.In(`UPDATE records SET status = ?, updated_at = ?, `+stamp+`due_at = NULL, snoozed_until = NULL,
			lease_owner = NULL, lease_until = NULL WHERE id = ? AND agent = ? AND resource_id = ? AND thread_id = ? AND status IN (?)`,
			append([]any{string(to), micros(now)}, stampArgs(stamp, micros(now), id, k.Agent, k.Resource, k.Thread, from)...)...)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(in), args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		if changed {
			if err := s.tellRecords(ctx, tx, told, now); err != nil {
				return err
			}
		}
		out, err = s.threadRecord(ctx, tx, k, id)
		return err
	})
	if err != nil {
		return inbox.Record{}, false, fmt.Errorf("set record %s %s: %w", id, to, err)
	}
	return out, changed, nil
}

// stampArgs is rest, preceded by now when a stamp column is set.
func stampArgs(stamp string, now int64, rest ...any) []any {
	if stamp == "" {
		return rest
	}
	return append([]any{now}, rest...)
}

// statusStamp is the column holding when a record first reached status to; "" for a
// status without one of its own.
func statusStamp(to inbox.Status) string {
	switch to {
	case inbox.StatusSeen:
		return "seen_at"
	case inbox.StatusDismissed:
		return "dismissed_at"
	case inbox.StatusArchived:
		return "archived_at"
	case inbox.StatusDiscarded:
		return "discarded_at"
	}
	return ""
}
