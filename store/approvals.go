package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"time"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
)

var (
	_ approval.Store  = (*Approvals)(nil)
	_ approval.Places = (*Approvals)(nil)
)

const approvalColumns = `id, agent, resource_id, thread_id, origin, kind, answer, run_id, tool_call_id, tool, arguments, truncated,
	description, status, connector, channel, message_ts, thread_ts, post_error, decided_by, decided_by_name,
	decided_at, created_at, expires_at, updated_at`

type approvalRow struct {
	ID            string         `db:"id"`
	Agent         string         `db:"agent"`
	Resource      string         `db:"resource_id"`
	Thread        string         `db:"thread_id"`
	Origin        string         `db:"origin"`
	Kind          string         `db:"kind"`
	Answer        string         `db:"answer"`
	RunID         string         `db:"run_id"`
	ToolCallID    string         `db:"tool_call_id"`
	Tool          string         `db:"tool"`
	Arguments     sql.NullString `db:"arguments"`
	Truncated     int64          `db:"truncated"`
	Description   string         `db:"description"`
	Status        string         `db:"status"`
	Connector     string         `db:"connector"`
	Channel       string         `db:"channel"`
	MessageTS     string         `db:"message_ts"`
	ThreadTS      string         `db:"thread_ts"`
	PostError     string         `db:"post_error"`
	DecidedBy     string         `db:"decided_by"`
	DecidedByName string         `db:"decided_by_name"`
	DecidedAt     sql.NullInt64  `db:"decided_at"`
	CreatedAt     int64          `db:"created_at"`
	ExpiresAt     int64          `db:"expires_at"`
	UpdatedAt     int64          `db:"updated_at"`
}

func (r approvalRow) approval() approval.Approval {
	a := approval.Approval{ID: r.ID, ThreadKey: inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread},
		Origin: r.Origin, Kind: r.Kind, Answer: r.Answer, RunID: r.RunID, ToolCallID: r.ToolCallID, Tool: r.Tool, Truncated: r.Truncated != 0,
		Description: r.Description, Status: approval.Status(r.Status), Connector: r.Connector, Channel: r.Channel,
		MessageTS: r.MessageTS, ThreadTS: r.ThreadTS, PostError: r.PostError, DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: fromNullMicros(r.DecidedAt), CreatedAt: fromMicros(r.CreatedAt),
		ExpiresAt: fromMicros(r.ExpiresAt), UpdatedAt: fromMicros(r.UpdatedAt)}
	if r.Arguments.Valid {
		a.Arguments = json.RawMessage(r.Arguments.String)
	}
	return a
}

// CreateApproval inserts a unless its thread has an approval for the same tool call.
func (s *Approvals) CreateApproval(ctx context.Context, a approval.Approval) (approval.Approval, bool, error) {
	var created bool
	var row approvalRow
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var args sql.NullString
		if len(a.Arguments) > 0 {
			args = sql.NullString{String: cleanText(string(a.Arguments)), Valid: true}
		}
		trunc := 0
		if a.Truncated {
			trunc = 1
		}
		kind := a.Kind
		if kind == "" {
			kind = approval.KindApproval
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO approvals (id, agent, resource_id, thread_id, origin, kind, run_id,
			tool_call_id, tool, arguments, truncated, description, status, connector, created_at, expires_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (agent, resource_id, thread_id, tool_call_id) DO NOTHING`),
			a.ID, cleanText(a.Agent), cleanText(a.Resource), cleanText(a.Thread), a.Origin, kind, cleanText(a.RunID),
			cleanText(a.ToolCallID), cleanText(a.Tool), args, trunc, cleanText(a.Description), string(a.Status),
			cleanText(a.Connector), micros(a.CreatedAt), micros(a.ExpiresAt), micros(a.UpdatedAt))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		created = n > 0
		return tx.GetContext(ctx, &row, s.q(`SELECT `+approvalColumns+` FROM approvals
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND tool_call_id = ?`),
			cleanText(a.Agent), cleanText(a.Resource), cleanText(a.Thread), cleanText(a.ToolCallID))
	})
	if err != nil {
		return approval.Approval{}, false, fmt.Errorf("create approval: %w", err)
	}
	return row.approval(), created, nil
}

// GetApproval reads one approval.
func (s *Approvals) GetApproval(ctx context.Context, id string) (approval.Approval, error) {
	var row approvalRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+approvalColumns+` FROM approvals WHERE id = ?`), cleanText(id))
	if errors.Is(err, sql.ErrNoRows) {
		return approval.Approval{}, fmt.Errorf("approval %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return approval.Approval{}, fmt.Errorf("read approval %s: %w", id, err)
	}
	return row.approval(), nil
}

// SetApprovalMessage records where the approval's Slack message is, or why it is not.
func (s *Approvals) SetApprovalMessage(ctx context.Context, id, connector, channel, ts, threadTS, postErr string, now time.Time) error {
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, s.q(`UPDATE approvals SET connector = ?, channel = ?, message_ts = ?, thread_ts = ?,
			post_error = ?, updated_at = ? WHERE id = ?`),
			cleanText(connector), cleanText(channel), cleanText(ts), cleanText(threadTS), cleanText(postErr), micros(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("record approval message %s: %w", id, err)
	}
	return nil
}

// DecideApproval moves a pending approval to status, once.
func (s *Approvals) DecideApproval(ctx context.Context, id string, status approval.Status, by, byName string, now time.Time) (approval.Approval, bool, error) {
	decidedAt := sql.NullInt64{Int64: micros(now), Valid: status != approval.StatusExpired}
	a, changed, err := s.moveApproval(ctx, id, `UPDATE approvals SET status = ?, decided_by = ?, decided_by_name = ?,
			decided_at = ?, updated_at = ? WHERE id = ? AND status = 'pending'`,
		string(status), cleanText(by), cleanText(byName), decidedAt, micros(now), id)
	if err != nil {
		return approval.Approval{}, false, fmt.Errorf("decide approval %s: %w", id, err)
	}
	return a, changed, nil
}

// AnswerApproval moves a pending question to answered with the reply's text, once: of
// replies racing on any replica (or one redelivered), only one changes it.
func (s *Approvals) AnswerApproval(ctx context.Context, id, answer, by, byName string, now time.Time) (approval.Approval, bool, error) {
	a, changed, err := s.moveApproval(ctx, id, `UPDATE approvals SET status = 'answered', answer = ?, decided_by = ?,
			decided_by_name = ?, decided_at = ?, updated_at = ? WHERE id = ? AND status = 'pending' AND kind = 'question'`,
		cleanText(answer), cleanText(by), cleanText(byName), micros(now), micros(now), id)
	if err != nil {
		return approval.Approval{}, false, fmt.Errorf("answer question %s: %w", id, err)
	}
	return a, changed, nil
}

// moveApproval runs a conditional update of approval id and reads the row back in the
// same transaction; changed reports whether the condition held (only one racer wins).
func (s *Approvals) moveApproval(ctx context.Context, id, update string, args ...any) (approval.Approval, bool, error) {
	var row approvalRow
	var changed bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(update), args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		err = tx.GetContext(ctx, &row, s.q(`SELECT `+approvalColumns+` FROM approvals WHERE id = ?`), id)
		if errors.Is(err, sql.ErrNoRows) {
			return inbox.ErrNotFound
		}
		return err
	})
	if err != nil {
		return approval.Approval{}, false, err
	}
	return row.approval(), changed, nil
}

// QuestionsInThread lists the connector's questions posted in channel as the message
// threadTS or inside its thread, oldest first.
func (s *Approvals) QuestionsInThread(ctx context.Context, connector, channel, threadTS string, limit int) ([]approval.Approval, error) {
	var rows []approvalRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+approvalColumns+` FROM approvals
		WHERE kind = 'question' AND connector = ? AND channel = ? AND (message_ts = ? OR thread_ts = ?)
		ORDER BY created_at, id LIMIT `+fmt.Sprint(max(limit, 1))),
		cleanText(connector), cleanText(channel), cleanText(threadTS), cleanText(threadTS))
	if err != nil {
		return nil, fmt.Errorf("list the questions of a Slack thread: %w", err)
	}
	return approvalsOf(rows), nil
}

// ReopenApproval puts an approval in status from back to pending.
func (s *Approvals) ReopenApproval(ctx context.Context, id string, from approval.Status, now time.Time) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE approvals SET status = 'pending', decided_by = '', decided_by_name = '',
			answer = '', decided_at = NULL, updated_at = ? WHERE id = ? AND status = ?`), micros(now), id, string(from))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("reopen approval %s: %w", id, err)
	}
	return n > 0, nil
}

// ExpireApprovals expires up to limit pending approvals past their expiry.
func (s *Approvals) ExpireApprovals(ctx context.Context, now time.Time, limit int) ([]approval.Approval, error) {
	var w where
	w.add("status = 'pending' AND expires_at <= ?", micros(now))
	return s.expireApprovals(ctx, now, w, fmt.Sprintf(` ORDER BY expires_at, id LIMIT %d`, max(limit, 1)))
}

// ExpireRunApprovals expires the pending approvals of a thread's run or tool call.
func (s *Approvals) ExpireRunApprovals(ctx context.Context, k inbox.ThreadKey, runID, toolCallID string, now time.Time) ([]approval.Approval, error) {
	var w where
	w.add("status = 'pending' AND agent = ? AND resource_id = ? AND thread_id = ?", k.Agent, k.Resource, k.Thread)
	if runID != "" {
		w.add("run_id = ?", runID)
	}
	if toolCallID != "" {
		w.add("tool_call_id = ?", toolCallID)
	}
	return s.expireApprovals(ctx, now, w, "")
}

// expireApprovals expires the pending approvals w selects (ids chosen first, so tail's
// LIMIT applies on both dialects) and returns those it expired: one decided meanwhile
// by a click on another replica is neither changed nor returned.
func (s *Approvals) expireApprovals(ctx context.Context, now time.Time, w where, tail string) ([]approval.Approval, error) {
	var rows []approvalRow
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var ids []string
		if err := tx.SelectContext(ctx, &ids, s.q(`SELECT id FROM approvals`+w.sql()+tail), w.args...); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		in, inArgs, err := sqlx.In(`UPDATE approvals SET status = 'expired', updated_at = ? WHERE status = 'pending' AND id IN (?)`, micros(now), ids)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(in), inArgs...); err != nil {
			return err
		}
		in, inArgs, err = sqlx.In(`SELECT `+approvalColumns+` FROM approvals
			WHERE id IN (?) AND status = 'expired' AND updated_at = ? ORDER BY created_at, id`, ids, micros(now))
		if err != nil {
			return err
		}
		return tx.SelectContext(ctx, &rows, s.q(in), inArgs...)
	})
	if err != nil {
		return nil, fmt.Errorf("expire approvals: %w", err)
	}
	return approvalsOf(rows), nil
}

// qApprovalUndelivered is the one definition of an approval (alias a) whose decision has
// not reached its thread: an API approval decided or expired whose <approval> signal the
// thread has not logged. Its wake waited for a max_concurrent_wakes slot, or the replica
// stopped mid-delivery.
const qApprovalUndelivered = `a.origin = '` + approval.OriginAPI + `' AND a.status <> 'pending'
	AND NOT EXISTS (SELECT 1 FROM signals s WHERE s.agent = a.agent AND s.resource_id = a.resource_id
		AND s.thread_id = a.thread_id AND s.id = '` + approval.SignalPrefix + `' || a.id)`

// qApprovalWaiting is an undelivered decision made since ? (one argument): one older
// than approval.DeliverFor is given up and holds no place in the wake queue.
const qApprovalWaiting = `a.updated_at >= ? AND ` + qApprovalUndelivered

// UndeliveredApprovals lists API approvals created since createdSince that are decided
// or expired between decidedSince and before, whose <approval> signal the thread has
// not logged: oldest change first, at most limit. (createdSince lets the index on
// created_at narrow the scan.)
func (s *Approvals) UndeliveredApprovals(ctx context.Context, createdSince, decidedSince, before time.Time, limit int) ([]approval.Approval, error) {
	var rows []approvalRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+approvalColumns+` FROM approvals a
		WHERE a.created_at >= ? AND a.updated_at <= ? AND `+qApprovalWaiting+`
		ORDER BY a.updated_at, a.id LIMIT `+fmt.Sprint(max(limit, 1))),
		micros(createdSince), micros(before), micros(decidedSince))
	if err != nil {
		return nil, fmt.Errorf("list undelivered approvals: %w", err)
	}
	return approvalsOf(rows), nil
}

// QueuedApprovals lists the undelivered decisions (made since `since`) of agentID's
// threads that wait in its wake queue, in the queue's order: the first is the one a
// freed wake slot goes to unless a record waiter is ahead of it. At most limit.
func (s *Approvals) QueuedApprovals(ctx context.Context, agentID string, since time.Time, limit int) ([]approval.Approval, error) {
	var rows []approvalRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+approvalColumns+` FROM approvals a
		JOIN (SELECT resource_id AS q_resource, thread_id AS q_thread, priority_rank, queued_at FROM wake_queue
			WHERE agent = ?) q ON a.resource_id = q.q_resource AND a.thread_id = q.q_thread
		WHERE a.agent = ? AND `+qApprovalWaiting+`
		ORDER BY q.priority_rank DESC, q.queued_at, a.resource_id, a.thread_id, a.updated_at, a.id
		LIMIT `+fmt.Sprint(max(limit, 1))),
		agentID, agentID, micros(since))
	if err != nil {
		return nil, fmt.Errorf("list queued approvals of %s: %w", agentID, err)
	}
	return approvalsOf(rows), nil
}

func approvalsOf(rows []approvalRow) []approval.Approval {
	out := make([]approval.Approval, len(rows))
	for i, r := range rows {
		out[i] = r.approval()
	}
	return out
}

// ListApprovals lists approvals newest first; next is "" on the last page.
func (s *Approvals) ListApprovals(ctx context.Context, f approval.Filter) ([]approval.Approval, string, error) {
	var w where
	for _, c := range []struct{ col, v string }{{"agent", f.Agent}, {"resource_id", f.Resource}, {"thread_id", f.Thread}, {"tool", f.Tool}} {
		if c.v != "" {
			w.add(c.col+" = ?", c.v)
		}
	}
	if len(f.Status) > 0 {
		statuses := make([]string, len(f.Status))
		for i, st := range f.Status {
			statuses[i] = string(st)
		}
		in, args, err := sqlx.In("status IN (?)", statuses)
		if err != nil {
			return nil, "", err
		}
		w.add(in, args...)
	}
	if err := w.addCursor(f.Cursor, "created_at"); err != nil {
		return nil, "", err
	}
	limit := inbox.PageSize(f.Limit)
	var rows []approvalRow
	if err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+approvalColumns+` FROM approvals`+w.sql()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit+1)), w.args...); err != nil {
		return nil, "", fmt.Errorf("list approvals: %w", err)
	}
	var next string
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = inbox.Cursor{At: fromMicros(last.CreatedAt), ID: last.ID}.Encode()
	}
	return approvalsOf(rows), next, nil
}

// LastSlackMessage is the newest Slack message routed to k through connector: where an
// approval for k's run is posted when no channel is configured. Both the record and its
// event must be Slack's: a record an agent or a generic sender labelled "slack" arrived
// through another connector kind (whose connector may share the Slack connector's name)
// and must not choose where approvals are posted.
func (s *Approvals) LastSlackMessage(ctx context.Context, k inbox.ThreadKey, connector string) (approval.SlackPlace, bool, error) {
	var rows []struct {
		Attributes string         `db:"attributes"`
		Payload    sql.NullString `db:"payload"`
	}
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT r.attributes, r.payload FROM records r JOIN events e ON e.id = r.event_id
		WHERE r.agent = ? AND r.resource_id = ? AND r.thread_id = ? AND r.source = 'slack' AND e.source = 'slack' AND e.connector = ?
		ORDER BY r.created_at DESC, r.id DESC LIMIT 1`), cleanText(k.Agent), cleanText(k.Resource), cleanText(k.Thread), cleanText(connector))
	if err != nil {
		return approval.SlackPlace{}, false, fmt.Errorf("find the last Slack message of %s: %w", k, err)
	}
	if len(rows) == 0 {
		return approval.SlackPlace{}, false, nil
	}
	var attrs inbox.Attributes
	if err := json.Unmarshal([]byte(rows[0].Attributes), &attrs); err != nil {
		return approval.SlackPlace{}, false, fmt.Errorf("decode attributes of the last Slack message of %s: %w", k, err)
	}
	str := func(key string) string {
		v, _ := attrs.Get(key)
		s, _ := v.(string)
		return s
	}
	p := approval.SlackPlace{Channel: str("channel"), TS: str("ts"), ThreadTS: str("thread_ts")}
	if rows[0].Payload.Valid {
		var payload struct {
			ChannelType string `json:"channel_type"`
		}
		_ = json.Unmarshal([]byte(rows[0].Payload.String), &payload)
		p.ChannelType = payload.ChannelType
	}
	return p, p.Channel != "", nil
}
