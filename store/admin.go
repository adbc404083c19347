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
	"github.com/signalgate/signalgate/inbox"
)

// EventByDelivery finds the event stored under a provider delivery id, each value as the
// inbox stores it (clean text; the id inbox.StoredKey).
func (s *Explain) EventByDelivery(ctx context.Context, source, connector, deliveryID string) (string, bool, error) {
	var id string
	err := s.r.GetContext(ctx, &id, s.q(`SELECT id FROM events WHERE source = ? AND connector = ? AND delivery_id = ?`),
		source, connector, deliveryID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("find event by delivery id: %w", err)
	}
	return id, true, nil
}

// FindMergeable returns the pending record n (as the inbox stores it: Notification.Stored)
// would merge into, as Ingest would choose it, or nil. It reads in a read-only
// transaction and changes nothing.
func (s *Explain) FindMergeable(ctx context.Context, n inbox.Notification) (*inbox.Record, error) {
	tx, err := s.r.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return s.findMergeable(ctx, txq{s: s.core, tx: tx}, n)
}

// RequeueRecord makes a record whose status is one of from pending and due now, in a
// fresh round of attempts (its attempts go on counting): the dispatcher delivers it
// again in full. operator says who did it, kept beside the policy's decision. Its new
// updated_at gives the delivery a new signal id, so a target that saw the old one takes it.
func (s *Admin) RequeueRecord(ctx context.Context, id string, from []inbox.Status, operator string, now time.Time) (inbox.Record, bool, error) {
	var out inbox.Record
	var changed bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		// The policy's reason stays; the operator's action goes beside it. attempts keeps
		// counting, and the redelivery's round (max_attempts, backoff, max_age) starts here.
		in, args, err := sqlx.In(`UPDATE records SET status = 'pending', action = ?, operator_action = ?, deliver_at = ?, summary_at = NULL,
			due_at = ?, full_when_idle = ?, attempts_base = attempts, next_attempt_at = NULL, first_attempt_at = NULL, last_error = '', delivered_at = NULL,
			updated_at = ?, lease_owner = NULL, lease_until = NULL
			WHERE id = ? AND status IN (?)`,
			string(inbox.ActionDeliver), cleanText(operator), micros(now), micros(now), false, micros(now), id, from)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(in), args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		recs, err := s.selectRecords(ctx, tx, `SELECT `+recordReadColumns+` FROM records WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("record %s: %w", id, inbox.ErrNotFound)
		}
		out = recs[0]
		return nil
	})
	if err != nil {
		return inbox.Record{}, false, fmt.Errorf("requeue record %s: %w", id, err)
	}
	return out, changed, nil
}

type threadRow struct {
	Agent     string         `db:"agent"`
	Resource  string         `db:"resource_id"`
	Thread    string         `db:"thread_id"`
	LastSeq   int64          `db:"last_seq"`
	CreatedAt int64          `db:"created_at"`
	UpdatedAt int64          `db:"updated_at"`
	RunID     sql.NullString `db:"run_id"`
	RunOrigin sql.NullString `db:"run_origin"`
	RunOpened sql.NullInt64  `db:"run_opened_at"`
	RunLease  sql.NullInt64  `db:"run_lease_until"`
	Urgent    int            `db:"urgent"`
	High      int            `db:"high"`
	Medium    int            `db:"medium"`
	Low       int            `db:"low"`
	Failed    int            `db:"failed"`
}

func (row threadRow) thread() agent.Thread {
	t := agent.Thread{
		ThreadKey: inbox.ThreadKey{Agent: row.Agent, Resource: row.Resource, Thread: row.Thread},
		Presence:  inbox.PresenceIdle,
		Pending:   agent.PendingCounts{Urgent: row.Urgent, High: row.High, Medium: row.Medium, Low: row.Low},
		Failed:    row.Failed, LastSeq: row.LastSeq,
		CreatedAt: fromMicros(row.CreatedAt), UpdatedAt: fromMicros(row.UpdatedAt),
	}
	t.Pending.Total = row.Urgent + row.High + row.Medium + row.Low
	if row.RunID.Valid {
		t.Presence = inbox.PresenceActive
		t.ActiveRun = &agent.ActiveRun{RunID: row.RunID.String, Origin: row.RunOrigin.String,
			Since: fromMicros(row.RunOpened.Int64), LeaseUntil: fromMicros(row.RunLease.Int64)}
	}
	return t
}

// ListThreads lists threads with their live run and pending counts, most recently
// active first; next is "" on the last page.
func (s *Admin) ListThreads(ctx context.Context, f agent.ThreadFilter, now time.Time) ([]agent.Thread, string, error) {
	var w, rw where // rw narrows the record counts to the listed threads
	for col, v := range map[string]string{"agent": f.Agent, "resource_id": f.Resource, "thread_id": f.Thread} {
		if v != "" {
			w.add("t."+col+" = ?", v)
			rw.add(col+" = ?", v)
		}
	}
	rw.add("status IN ('pending', 'failed')")
	switch f.Presence {
	case inbox.PresenceActive:
		w.add("r.id IS NOT NULL")
	case inbox.PresenceIdle:
		w.add("r.id IS NULL")
	}
	if f.Pending {
		w.add("COALESCE(p.urgent + p.high + p.medium + p.low, 0) > 0")
	}
	c, err := inbox.ParseCursor(f.Cursor)
	if err != nil {
		return nil, "", err
	}
	if c != nil {
		var key [3]string
		if err := json.Unmarshal([]byte(c.ID), &key); err != nil {
			return nil, "", inbox.ErrBadCursor
		}
		at := micros(c.At)
		w.add("(t.updated_at < ? OR (t.updated_at = ? AND (t.agent, t.resource_id, t.thread_id) < (?, ?, ?)))",
			at, at, key[0], key[1], key[2])
	}
	limit := inbox.PageSize(f.Limit)
	query := `SELECT t.agent, t.resource_id, t.thread_id, t.last_seq, t.created_at, t.updated_at,
		r.id AS run_id, r.origin AS run_origin, r.opened_at AS run_opened_at, r.lease_until AS run_lease_until,
		COALESCE(p.urgent, 0) AS urgent, COALESCE(p.high, 0) AS high, COALESCE(p.medium, 0) AS medium,
		COALESCE(p.low, 0) AS low, COALESCE(p.failed, 0) AS failed
		FROM threads t
		LEFT JOIN runs r ON r.agent = t.agent AND r.resource_id = t.resource_id AND r.thread_id = t.thread_id
			AND r.status = 'open' AND r.lease_until > ?
		LEFT JOIN (SELECT agent, resource_id, thread_id,
			SUM(CASE WHEN status = 'pending' AND priority = 'urgent' THEN 1 ELSE 0 END) AS urgent,
			SUM(CASE WHEN status = 'pending' AND priority = 'high' THEN 1 ELSE 0 END) AS high,
			SUM(CASE WHEN status = 'pending' AND priority = 'medium' THEN 1 ELSE 0 END) AS medium,
			SUM(CASE WHEN status = 'pending' AND priority = 'low' THEN 1 ELSE 0 END) AS low,
			SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed
			FROM records` + rw.sql() + ` GROUP BY agent, resource_id, thread_id) p
		ON p.agent = t.agent AND p.resource_id = t.resource_id AND p.thread_id = t.thread_id` + w.sql() +
		fmt.Sprintf(` ORDER BY t.updated_at DESC, t.agent DESC, t.resource_id DESC, t.thread_id DESC LIMIT %d`, limit+1)
	args := append(append([]any{micros(now)}, rw.args...), w.args...)
	var rows []threadRow
	if err := s.r.SelectContext(ctx, &rows, s.q(query), args...); err != nil {
		return nil, "", fmt.Errorf("list threads: %w", err)
	}
	out := make([]agent.Thread, 0, min(len(rows), limit))
	next := ""
	for i, row := range rows {
		if i == limit {
			last := rows[limit-1]
			id, err := json.Marshal([3]string{last.Agent, last.Resource, last.Thread})
			if err != nil {
				return nil, "", fmt.Errorf("encode cursor: %w", err)
			}
			next = inbox.Cursor{At: fromMicros(last.UpdatedAt), ID: string(id)}.Encode()
			break
		}
		out = append(out, row.thread())
	}
	return out, next, nil
}

// RecordSignals lists the signal frames of k's log that carried record id, oldest first.
func (s *Admin) RecordSignals(ctx context.Context, k inbox.ThreadKey, id string) ([]agent.Frame, error) {
	quoted, err := json.Marshal(id) // record_ids is a JSON array of strings
	if err != nil {
		return nil, fmt.Errorf("encode record id: %w", err)
	}
	var rows []frameRow
	err = s.r.SelectContext(ctx, &rows, s.q(`SELECT `+frameColumns+` FROM signals
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND event = ? AND record_ids LIKE ? ESCAPE '\'
		ORDER BY seq`), k.Agent, k.Resource, k.Thread, agent.EventSignal, "%"+escapeLike(string(quoted))+"%")
	if err != nil {
		return nil, fmt.Errorf("read signals of record %s: %w", id, err)
	}
	out := make([]agent.Frame, 0, len(rows))
	for i := range rows {
		f, err := rows[i].frame()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

type eventRefRow struct {
	ID         string `db:"id"`
	Type       string `db:"type"`
	Status     string `db:"status"`
	Error      string `db:"error"`
	ReceivedAt int64  `db:"received_at"`
}

// ConnectorActivity reads a connector's newest event and newest failed one: an event
// that could not be parsed, or one a route could not place.
func (s *Admin) ConnectorActivity(ctx context.Context, source, connector string) (inbox.ConnectorActivity, error) {
	var out inbox.ConnectorActivity
	for _, q := range []struct {
		cond string
		dst  **inbox.EventRef
	}{
		{"", &out.LastEvent},
		{` AND (status = 'invalid' OR (status <> 'ignored' AND error <> ''))`, &out.LastError},
	} {
		var row eventRefRow
		err := s.r.GetContext(ctx, &row, s.q(`SELECT id, type, status, error, received_at FROM events
			WHERE source = ? AND connector = ?`+q.cond+` ORDER BY received_at DESC, id DESC LIMIT 1`), source, connector)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("read activity of %s/%s: %w", source, connector, err)
		}
		*q.dst = &inbox.EventRef{ID: row.ID, Type: row.Type, Status: inbox.EventStatus(row.Status), Error: row.Error,
			ReceivedAt: fromMicros(row.ReceivedAt)}
	}
	return out, nil
}
