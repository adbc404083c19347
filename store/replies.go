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
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

var (
	_ reply.Store = (*Replies)(nil)
	_ reply.Own   = (*Replies)(nil)
)

const replyColumns = `id, agent, resource_id, thread_id, text, reply_to, watch, status, attempts, next_attempt_at,
	last_error, platform_id, url, sent_at, queued_at, created_at, updated_at`

type replyRow struct {
	ID            string        `db:"id"`
	Agent         string        `db:"agent"`
	Resource      string        `db:"resource_id"`
	Thread        string        `db:"thread_id"`
	Text          string        `db:"text"`
	ReplyTo       string        `db:"reply_to"`
	Watch         int64         `db:"watch"`
	Status        string        `db:"status"`
	Attempts      int64         `db:"attempts"`
	NextAttemptAt sql.NullInt64 `db:"next_attempt_at"`
	LastError     string        `db:"last_error"`
	PlatformID    string        `db:"platform_id"`
	URL           string        `db:"url"`
	SentAt        sql.NullInt64 `db:"sent_at"`
	QueuedAt      int64         `db:"queued_at"`
	CreatedAt     int64         `db:"created_at"`
	UpdatedAt     int64         `db:"updated_at"`
}

func (r replyRow) reply() reply.Reply {
	out := reply.Reply{ID: r.ID, Thread: inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread},
		Text: r.Text, Watch: r.Watch != 0, Status: reply.Status(r.Status), Attempts: int(r.Attempts),
		NextAttemptAt: fromNullMicros(r.NextAttemptAt), LastError: r.LastError, PlatformID: r.PlatformID, URL: r.URL,
		SentAt: fromNullMicros(r.SentAt), QueuedAt: fromMicros(r.QueuedAt), CreatedAt: fromMicros(r.CreatedAt),
		UpdatedAt: fromMicros(r.UpdatedAt)}
	_ = json.Unmarshal([]byte(r.ReplyTo), &out.To) // written by CreateReply from a To
	return out
}

func repliesOf(rows []replyRow) []reply.Reply {
	out := make([]reply.Reply, len(rows))
	for i, r := range rows {
		out[i] = r.reply()
	}
	return out
}

// CreateReply inserts r unless a reply with its id exists; then it returns that one.
func (s *Replies) CreateReply(ctx context.Context, r reply.Reply) (reply.Reply, bool, error) {
	to, err := json.Marshal(r.To)
	if err != nil {
		return reply.Reply{}, false, fmt.Errorf("encode replyTo: %w", err)
	}
	watch := 0
	if r.Watch {
		watch = 1
	}
	var created bool
	var row replyRow
	err = s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO replies (id, agent, resource_id, thread_id, text, reply_to, source,
			connector, watch, status, next_attempt_at, queued_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
			cleanText(r.ID), cleanText(r.Thread.Agent), cleanText(r.Thread.Resource), cleanText(r.Thread.Thread),
			cleanText(r.Text), cleanText(string(to)), cleanText(r.To.Source), cleanText(r.To.Connector), watch,
			string(r.Status), nullMicros(r.NextAttemptAt), micros(r.QueuedAt), micros(r.CreatedAt), micros(r.UpdatedAt))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		created = n > 0
		return tx.GetContext(ctx, &row, s.q(`SELECT `+replyColumns+` FROM replies WHERE id = ?`), cleanText(r.ID))
	})
	if err != nil {
		return reply.Reply{}, false, fmt.Errorf("create reply %s: %w", r.ID, err)
	}
	return row.reply(), created, nil
}

// GetReply reads one reply.
func (s *Replies) GetReply(ctx context.Context, id string) (reply.Reply, error) {
	var row replyRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+replyColumns+` FROM replies WHERE id = ?`), cleanText(id))
	if errors.Is(err, sql.ErrNoRows) {
		return reply.Reply{}, fmt.Errorf("reply %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return reply.Reply{}, fmt.Errorf("read reply %s: %w", id, err)
	}
	return row.reply(), nil
}

// ThreadOrigins lists the replyTo of the thread's newest records (of up to limit
// records) with each record's verified_by, newest first, each place and provenance once.
func (s *Replies) ThreadOrigins(ctx context.Context, k inbox.ThreadKey, limit int) ([]reply.Origin, error) {
	var mds []string
	err := s.r.SelectContext(ctx, &mds, s.q(`SELECT metadata FROM records
		WHERE agent = ? AND resource_id = ? AND thread_id = ? ORDER BY created_at DESC, id DESC LIMIT `+fmt.Sprint(max(limit, 1))),
		cleanText(k.Agent), cleanText(k.Resource), cleanText(k.Thread))
	if err != nil {
		return nil, fmt.Errorf("read the origins of thread %s: %w", k, err)
	}
	var out []reply.Origin
	seen := map[string]bool{}
	for _, md := range mds {
		if !strings.Contains(md, `"`+reply.MetadataKey+`"`) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(md), &m) != nil {
			continue
		}
		to, ok := reply.FromMetadata(m)
		if !ok {
			continue
		}
		o := reply.Origin{To: to}
		o.VerifiedBy, _ = m[agent.MetaVerifiedBy].(string)
		raw, _ := json.Marshal(o)
		if !seen[string(raw)] {
			seen[string(raw)] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// ClaimReplies leases up to limit queued replies due at now, earliest due first.
// PostgreSQL skips rows other replicas are claiming (FOR UPDATE SKIP LOCKED); SQLite
// serialises writers, so its UPDATE … RETURNING is already exclusive.
func (s *Replies) ClaimReplies(ctx context.Context, owner string, now, until time.Time, limit int) ([]reply.Reply, error) {
	lock := ""
	if s.driver == DriverPostgres {
		lock = ` FOR UPDATE SKIP LOCKED`
	}
	query := `UPDATE replies SET lease_owner = ?, lease_until = ? WHERE id IN (
		SELECT id FROM replies WHERE status = 'queued' AND next_attempt_at <= ?
		  AND (lease_until IS NULL OR lease_until <= ?)
		ORDER BY next_attempt_at LIMIT ?` + lock + `)
		RETURNING ` + replyColumns
	var rows []replyRow
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &rows, s.q(query), owner, micros(until), micros(now), micros(now), max(limit, 1))
	})
	if err != nil {
		return nil, fmt.Errorf("claim due replies: %w", err)
	}
	return repliesOf(rows), nil
}

// BeginReplyAttempt counts an attempt of a queued reply owner still leases.
func (s *Replies) BeginReplyAttempt(ctx context.Context, id, owner string, now time.Time) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE replies SET attempts = attempts + 1, updated_at = ?
			WHERE id = ? AND status = 'queued' AND lease_owner = ? AND lease_until > ?`),
			micros(now), id, owner, micros(now))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("count an attempt of reply %s: %w", id, err)
	}
	return n > 0, nil
}

// FinishReply records a pass's outcome. Sent stands whoever holds the lease (the
// platform has it); failed and a retry only from the lease's owner.
func (s *Replies) FinishReply(ctx context.Context, id, owner string, o reply.Outcome) error {
	now := micros(o.Now)
	err := s.inRecordTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		switch o.Status {
		case reply.StatusSent:
			_, err = tx.ExecContext(ctx, s.q(`UPDATE replies SET status = 'sent', platform_id = ?, url = ?, sent_at = ?,
				next_attempt_at = NULL, lease_owner = '', lease_until = NULL, last_error = '', updated_at = ?
				WHERE id = ? AND status = 'queued'`),
				cleanText(o.Sent.PlatformID), cleanText(o.Sent.URL), now, now, id)
		case reply.StatusFailed:
			_, err = tx.ExecContext(ctx, s.q(`UPDATE replies SET status = 'failed', last_error = ?, next_attempt_at = NULL,
				lease_owner = '', lease_until = NULL, updated_at = ? WHERE id = ? AND status = 'queued' AND lease_owner = ?`),
				cleanText(o.Error), now, id, owner)
		case reply.StatusQueued:
			_, err = tx.ExecContext(ctx, s.q(`UPDATE replies SET last_error = ?, next_attempt_at = ?, lease_owner = '',
				lease_until = NULL, updated_at = ? WHERE id = ? AND status = 'queued' AND lease_owner = ?`),
				cleanText(o.Error), micros(o.NextAttemptAt), now, id, owner)
		default:
			err = fmt.Errorf("no outcome %q", o.Status)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("record reply %s %s: %w", id, o.Status, err)
	}
	return nil
}

// NextReplyDue is the earliest due time of a queued reply.
func (s *Replies) NextReplyDue(ctx context.Context) (*time.Time, error) {
	var v sql.NullInt64
	if err := s.r.GetContext(ctx, &v, `SELECT MIN(next_attempt_at) FROM replies WHERE status = 'queued'`); err != nil {
		return nil, fmt.Errorf("read the next reply due: %w", err)
	}
	return fromNullMicros(v), nil
}

// ListReplies lists replies newest first.
func (s *Replies) ListReplies(ctx context.Context, f reply.Filter) ([]reply.Reply, string, error) {
	var w where
	for _, c := range []struct{ col, v string }{{"agent", f.Agent}, {"resource_id", f.Resource}, {"thread_id", f.Thread},
		{"source", f.Source}, {"connector", f.Connector}} {
		if c.v != "" {
			w.add(c.col+" = ?", c.v)
		}
	}
	if len(f.Status) > 0 {
		ph := make([]string, len(f.Status))
		args := make([]any, len(f.Status))
		for i, st := range f.Status {
			ph[i], args[i] = "?", string(st)
		}
		w.add("status IN ("+strings.Join(ph, ", ")+")", args...)
	}
	if err := w.addCursor(f.Cursor, "created_at"); err != nil {
		return nil, "", err
	}
	limit := inbox.PageSize(f.Limit)
	var rows []replyRow
	if err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+replyColumns+` FROM replies`+w.sql()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit+1)), w.args...); err != nil {
		return nil, "", fmt.Errorf("list replies: %w", err)
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = inbox.Cursor{At: fromMicros(last.CreatedAt), ID: last.ID}.Encode()
	}
	return repliesOf(rows), next, nil
}

// RequeueReply moves a reply in status from to queued, due now, with max_age counted
// afresh; attempts stay, so a reply that may have reached the platform is looked for first.
func (s *Replies) RequeueReply(ctx context.Context, id string, from reply.Status, now time.Time) (reply.Reply, bool, error) {
	return s.moveReply(ctx, id, from, `status = 'queued', next_attempt_at = ?, queued_at = ?, updated_at = ?`,
		micros(now), micros(now), micros(now))
}

// DeclineReply moves a pending reply to declined.
func (s *Replies) DeclineReply(ctx context.Context, id, reason string, now time.Time) (reply.Reply, bool, error) {
	return s.moveReply(ctx, id, reply.StatusPending, `status = 'declined', last_error = ?, updated_at = ?`,
		cleanText(reason), micros(now))
}

func (s *Replies) moveReply(ctx context.Context, id string, from reply.Status, set string, args ...any) (reply.Reply, bool, error) {
	var row replyRow
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE replies SET `+set+`, lease_owner = '', lease_until = NULL
			WHERE id = ? AND status = ?`), append(args, cleanText(id), string(from))...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		err = tx.GetContext(ctx, &row, s.q(`SELECT `+replyColumns+` FROM replies WHERE id = ?`), cleanText(id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("reply %s: %w", id, inbox.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return reply.Reply{}, false, fmt.Errorf("move reply %s from %s: %w", id, from, err)
	}
	return row.reply(), n > 0, nil
}

// qOwnReply is OwnReply's lookup, made for every Slack message and GitHub comment.
const qOwnReply = `SELECT COUNT(*) FROM replies
	WHERE source = ? AND connector = ? AND platform_id = ? AND platform_id <> ''`

// OwnReply reports whether platformID is a post the outbox sent through that connector.
func (s *Replies) OwnReply(ctx context.Context, source, connector, platformID string) (bool, error) {
	if platformID == "" {
		return false, nil
	}
	var n int
	err := s.readGet(ctx, &n, qOwnReply, cleanText(source), cleanText(connector), cleanText(platformID))
	if err != nil {
		return false, fmt.Errorf("look up own reply: %w", err)
	}
	return n > 0, nil
}
