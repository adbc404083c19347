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

	"github.com/signalgate/signalgate/inbox"
)

const recordColumns = `id, agent, resource_id, thread_id, event_id, route, source, kind, priority, summary, payload,
	dedupe_key, coalesce_key, attributes, metadata, deliver_as, status, coalesced_count, action, reason,
	deliver_at, summary_at, full_when_idle, attempts, next_attempt_at, last_error,
	delivered_signal_id, summary_signal_id, created_at, updated_at, delivered_at,
	net_key, net_state, rest_state, superseded_by, operator_action, stream_options,
	source_id, last_attempt_at, seen_at, dismissed_at, archived_at, discarded_at, snoozed_until,
	held_by, held_until, trace_parent, trace_links`

// recordReadColumns adds what only the dispatcher and single-record reads need; inserts
// and merges never write it.
const recordReadColumns = recordColumns + `, first_attempt_at, attempts_base`

// recordRow is the database shape of inbox.Record.
type recordRow struct {
	ID             string         `db:"id"`
	Agent          string         `db:"agent"`
	Resource       string         `db:"resource_id"`
	Thread         string         `db:"thread_id"`
	EventID        sql.NullString `db:"event_id"`
	Route          string         `db:"route"`
	Source         string         `db:"source"`
	Kind           string         `db:"kind"`
	Priority       string         `db:"priority"`
	Summary        string         `db:"summary"`
	Payload        sql.NullString `db:"payload"`
	DedupeKey      string         `db:"dedupe_key"`
	CoalesceKey    string         `db:"coalesce_key"`
	Attributes     string         `db:"attributes"`
	Metadata       string         `db:"metadata"`
	DeliverAs      string         `db:"deliver_as"`
	Status         string         `db:"status"`
	CoalescedCount int            `db:"coalesced_count"`
	Action         string         `db:"action"`
	Reason         string         `db:"reason"`
	DeliverAt      sql.NullInt64  `db:"deliver_at"`
	SummaryAt      sql.NullInt64  `db:"summary_at"`
	FullWhenIdle   bool           `db:"full_when_idle"`
	Attempts       int            `db:"attempts"`
	NextAttemptAt  sql.NullInt64  `db:"next_attempt_at"`
	FirstAttemptAt sql.NullInt64  `db:"first_attempt_at"` // read only where selected (recordReadColumns)
	AttemptsBase   int            `db:"attempts_base"`    // read only where selected (recordReadColumns)
	LastError      string         `db:"last_error"`
	SignalID       sql.NullString `db:"delivered_signal_id"`
	SummarySignal  sql.NullString `db:"summary_signal_id"`
	CreatedAt      int64          `db:"created_at"`
	UpdatedAt      int64          `db:"updated_at"`
	DeliveredAt    sql.NullInt64  `db:"delivered_at"`
	NetKey         string         `db:"net_key"`
	NetState       string         `db:"net_state"`
	RestState      string         `db:"rest_state"`
	SupersededBy   string         `db:"superseded_by"`
	OperatorAction string         `db:"operator_action"`
	StreamOptions  string         `db:"stream_options"`
	SourceID       string         `db:"source_id"`
	LastAttemptAt  sql.NullInt64  `db:"last_attempt_at"`
	SeenAt         sql.NullInt64  `db:"seen_at"`
	DismissedAt    sql.NullInt64  `db:"dismissed_at"`
	ArchivedAt     sql.NullInt64  `db:"archived_at"`
	DiscardedAt    sql.NullInt64  `db:"discarded_at"`
	SnoozedUntil   sql.NullInt64  `db:"snoozed_until"`
	HeldBy         string         `db:"held_by"`
	HeldUntil      sql.NullInt64  `db:"held_until"`
	TraceParent    string         `db:"trace_parent"`
	TraceLinks     string         `db:"trace_links"`
}

func (row *recordRow) record() (inbox.Record, error) {
	r := inbox.Record{
		ID:             row.ID,
		Thread:         inbox.ThreadKey{Agent: row.Agent, Resource: row.Resource, Thread: row.Thread},
		EventID:        row.EventID.String,
		Route:          row.Route,
		Source:         row.Source,
		Kind:           row.Kind,
		Priority:       inbox.Priority(row.Priority),
		Summary:        row.Summary,
		DedupeKey:      row.DedupeKey,
		CoalesceKey:    row.CoalesceKey,
		DeliverAs:      row.DeliverAs,
		Status:         inbox.Status(row.Status),
		CoalescedCount: row.CoalescedCount,
		Action:         inbox.Action(row.Action),
		Reason:         row.Reason,
		DeliverAt:      fromNullMicros(row.DeliverAt),
		SummaryAt:      fromNullMicros(row.SummaryAt),
		FullWhenIdle:   row.FullWhenIdle,
		Attempts:       row.Attempts,
		AttemptsBefore: row.AttemptsBase,
		NextAttemptAt:  fromNullMicros(row.NextAttemptAt),
		FirstAttemptAt: fromNullMicros(row.FirstAttemptAt),
		LastError:      row.LastError,
		SignalID:       row.SignalID.String,
		SummarySignal:  row.SummarySignal.String,
		CreatedAt:      fromMicros(row.CreatedAt),
		UpdatedAt:      fromMicros(row.UpdatedAt),
		DeliveredAt:    fromNullMicros(row.DeliveredAt),
		NetKey:         row.NetKey,
		State:          row.NetState,
		RestState:      row.RestState,
		SupersededBy:   row.SupersededBy,
		OperatorAction: row.OperatorAction,
		SourceID:       row.SourceID,
		LastAttemptAt:  fromNullMicros(row.LastAttemptAt),
		SeenAt:         fromNullMicros(row.SeenAt),
		DismissedAt:    fromNullMicros(row.DismissedAt),
		ArchivedAt:     fromNullMicros(row.ArchivedAt),
		DiscardedAt:    fromNullMicros(row.DiscardedAt),
		SnoozedUntil:   fromNullMicros(row.SnoozedUntil),
		HeldBy:         row.HeldBy,
		HeldUntil:      fromNullMicros(row.HeldUntil),
		TraceParent:    row.TraceParent,
		TraceLinks:     strings.Fields(row.TraceLinks),
	}
	if row.Payload.Valid {
		r.Payload = json.RawMessage(row.Payload.String)
	}
	if err := json.Unmarshal([]byte(row.Attributes), &r.Attributes); err != nil {
		return r, fmt.Errorf("decode attributes of record %s: %w", row.ID, err)
	}
	if r.Attributes == nil {
		r.Attributes = inbox.Attributes{}
	}
	if err := json.Unmarshal([]byte(row.Metadata), &r.Metadata); err != nil {
		return r, fmt.Errorf("decode metadata of record %s: %w", row.ID, err)
	}
	if row.StreamOptions != "" {
		if err := json.Unmarshal([]byte(row.StreamOptions), &r.StreamOptions); err != nil {
			return r, fmt.Errorf("decode stream options of record %s: %w", row.ID, err)
		}
	}
	return r, nil
}

func cleanText(s string) string { return inbox.CleanText(s) }

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// recordArgs encodes r in recordColumns order. What came with the notification comes as
// the inbox stores it (inbox.Notification.Stored); the text the store's other writers set
// (a decision's reason, a target's error, an operator's action, a source id, a hold) is
// cleaned here, since PostgreSQL refuses NUL and invalid UTF-8 in text.
func recordArgs(r *inbox.Record) ([]any, error) {
	attrs, err := json.Marshal(r.Attributes)
	if err != nil {
		return nil, fmt.Errorf("encode attributes: %w", err)
	}
	meta, err := json.Marshal(r.Metadata)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	var streamOptions []byte
	if r.StreamOptions != nil {
		if streamOptions, err = json.Marshal(r.StreamOptions); err != nil {
			return nil, fmt.Errorf("encode stream options: %w", err)
		}
	}
	var payload sql.NullString
	if len(r.Payload) > 0 {
		payload = sql.NullString{String: string(r.Payload), Valid: true}
	}
	return []any{r.ID, r.Thread.Agent, r.Thread.Resource, r.Thread.Thread, nullString(r.EventID), r.Route,
		r.Source, r.Kind, string(r.Priority), r.Summary, payload, r.DedupeKey, r.CoalesceKey,
		string(attrs), string(meta), r.DeliverAs, string(r.Status), r.CoalescedCount, string(r.Action), cleanText(r.Reason),
		nullMicros(r.DeliverAt), nullMicros(r.SummaryAt), r.FullWhenIdle, r.Attempts, nullMicros(r.NextAttemptAt),
		cleanText(r.LastError), nullString(r.SignalID), nullString(r.SummarySignal),
		micros(r.CreatedAt), micros(r.UpdatedAt), nullMicros(r.DeliveredAt),
		r.NetKey, r.State, r.RestState, r.SupersededBy, cleanText(r.OperatorAction), string(streamOptions),
		cleanText(r.SourceID), nullMicros(r.LastAttemptAt), nullMicros(r.SeenAt), nullMicros(r.DismissedAt),
		nullMicros(r.ArchivedAt), nullMicros(r.DiscardedAt), nullMicros(r.SnoozedUntil),
		cleanText(r.HeldBy), nullMicros(r.HeldUntil), r.TraceParent, strings.Join(r.TraceLinks, " ")}, nil
}

func (s *core) insertRecord(ctx context.Context, tx *sqlx.Tx, r *inbox.Record) error {
	var err error
	if r.HeldUntil, err = s.capSilenceHold(ctx, tx, r.HeldBy, r.HeldUntil); err != nil {
		return err
	}
	args, err := recordArgs(r)
	if err != nil {
		return err
	}
	args = append(args, r.Priority.Rank(), nullMicros(r.DueAt()))
	_, err = s.writeTx(tx).exec(ctx, qInsertRecord, args...)
	if err != nil {
		return fmt.Errorf("insert record: %w", err)
	}
	return nil
}

// updateRecord writes every mutable column of r.
func (s *core) updateRecord(ctx context.Context, tx *sqlx.Tx, r *inbox.Record) error {
	var err error
	if r.HeldUntil, err = s.capSilenceHold(ctx, tx, r.HeldBy, r.HeldUntil); err != nil {
		return err
	}
	args, err := recordArgs(r)
	if err != nil {
		return err
	}
	// Skip id (first) and re-append it for the WHERE clause.
	args = append(args[1:], r.Priority.Rank(), nullMicros(r.DueAt()), r.ID)
	_, err = s.writeTx(tx).exec(ctx, qUpdateRecord, args...)
	if err != nil {
		return fmt.Errorf("update record %s: %w", r.ID, err)
	}
	return nil
}

// GetRecord returns one record or inbox.ErrNotFound.
func (s *Admin) GetRecord(ctx context.Context, id string) (inbox.Record, error) {
	var row recordRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+recordReadColumns+` FROM records WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return inbox.Record{}, fmt.Errorf("record %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return inbox.Record{}, fmt.Errorf("get record %s: %w", id, err)
	}
	return row.record()
}

// ThreadRecords lists a thread's records, oldest first, optionally by status.
func (s *Records) ThreadRecords(ctx context.Context, k inbox.ThreadKey, statuses ...inbox.Status) ([]inbox.Record, error) {
	query := `SELECT ` + recordColumns + ` FROM records WHERE agent = ? AND resource_id = ? AND thread_id = ?`
	args := []any{k.Agent, k.Resource, k.Thread}
	if len(statuses) > 0 {
		in, inArgs, err := sqlx.In(` AND status IN (?)`, statuses)
		if err != nil {
			return nil, err
		}
		query += in
		args = append(args, inArgs...)
	}
	return s.selectRecords(ctx, s.r, query+` ORDER BY created_at, id`, args...)
}

func (s *core) selectRecords(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) ([]inbox.Record, error) {
	var rows []recordRow
	if err := sqlx.SelectContext(ctx, q, &rows, s.q(query), args...); err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	return recordsOf(rows)
}

// recordsOf converts rows read from the records table.
func recordsOf(rows []recordRow) ([]inbox.Record, error) {
	out := make([]inbox.Record, 0, len(rows))
	for i := range rows {
		r, err := rows[i].record()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// SetRecordStatus moves a record to status (seen, dismissed, archived, delivered…),
// clearing its schedule when the status is terminal.
func (s *Records) SetRecordStatus(ctx context.Context, id string, status inbox.Status, now time.Time) error {
	if !status.Valid() {
		return fmt.Errorf("set record %s status: unknown status %q", id, status)
	}
	query := `UPDATE records SET status = ?, updated_at = ? WHERE id = ?`
	if status.Terminal() {
		query = `UPDATE records SET status = ?, updated_at = ?, due_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = ?`
	}
	res, err := s.w.ExecContext(ctx, s.q(query), string(status), micros(now), id)
	if err != nil {
		return fmt.Errorf("set record %s status: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("record %s: %w", id, inbox.ErrNotFound)
	}
	return nil
}
