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

const frameColumns = `agent, resource_id, thread_id, seq, id, event, run_id, action, type, tag_name, contents,
	attributes, metadata, xml, record_ids, run_status, origin, signal_created_at, accepted_at, created_at, signal_extra`

type frameRow struct {
	Agent           string        `db:"agent"`
	Resource        string        `db:"resource_id"`
	Thread          string        `db:"thread_id"`
	Seq             int64         `db:"seq"`
	ID              string        `db:"id"`
	Event           string        `db:"event"`
	RunID           string        `db:"run_id"`
	Action          string        `db:"action"`
	Type            string        `db:"type"`
	TagName         string        `db:"tag_name"`
	Contents        string        `db:"contents"`
	Attributes      string        `db:"attributes"`
	Metadata        string        `db:"metadata"`
	XML             string        `db:"xml"`
	RecordIDs       string        `db:"record_ids"`
	RunStatus       string        `db:"run_status"`
	Origin          string        `db:"origin"`
	SignalCreatedAt sql.NullInt64 `db:"signal_created_at"`
	AcceptedAt      sql.NullInt64 `db:"accepted_at"`
	CreatedAt       int64         `db:"created_at"`
	Extra           string        `db:"signal_extra"`
}

// signalExtra is what signal_extra holds: a signal's Mastra fields beyond the tag.
type signalExtra struct {
	Parts           []agent.Part   `json:"parts,omitempty"`
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
}

// header is the frame of row without its JSON columns (record ids, and a signal's
// attributes, metadata, parts and provider options).
func (row *frameRow) header() agent.Frame {
	f := agent.Frame{
		Seq: row.Seq, Event: row.Event, ID: row.ID,
		Thread: inbox.ThreadKey{Agent: row.Agent, Resource: row.Resource, Thread: row.Thread},
		RunID:  row.RunID, Behavior: agent.Behavior(row.Action), XML: row.XML,
		RunStatus: row.RunStatus, Origin: row.Origin, CreatedAt: fromMicros(row.CreatedAt),
	}
	if row.Event != agent.EventSignal {
		return f
	}
	f.Signal = agent.Signal{ID: row.ID, Type: agent.SignalType(row.Type), TagName: row.TagName, Contents: row.Contents}
	if t := fromNullMicros(row.SignalCreatedAt); t != nil {
		f.Signal.CreatedAt = *t
	}
	if t := fromNullMicros(row.AcceptedAt); t != nil {
		f.Signal.AcceptedAt = *t
	}
	return f
}

func (row *frameRow) frame() (agent.Frame, error) {
	f := row.header()
	if err := json.Unmarshal([]byte(row.RecordIDs), &f.RecordIDs); err != nil {
		return f, fmt.Errorf("decode record ids of frame %s: %w", row.ID, err)
	}
	if row.Event != agent.EventSignal {
		return f, nil
	}
	if err := json.Unmarshal([]byte(row.Attributes), &f.Signal.Attributes); err != nil {
		return f, fmt.Errorf("decode attributes of frame %s: %w", row.ID, err)
	}
	if err := json.Unmarshal([]byte(row.Metadata), &f.Signal.Metadata); err != nil {
		return f, fmt.Errorf("decode metadata of frame %s: %w", row.ID, err)
	}
	if row.Extra != "" && row.Extra != "{}" {
		var x signalExtra
		if err := json.Unmarshal([]byte(row.Extra), &x); err != nil {
			return f, fmt.Errorf("decode parts of frame %s: %w", row.ID, err)
		}
		f.Signal.Parts, f.Signal.ProviderOptions = x.Parts, x.ProviderOptions
	}
	return f, nil
}

// logged is the frame handed to live subscribers for a row just logged: what a stream
// writes of row.frame(), its data object encoded from the row's JSON texts without
// decoding them (record ids, which no stream writes, are left out).
func (row *frameRow) logged() (agent.Frame, error) {
	f := row.header()
	var extra struct {
		Parts           json.RawMessage `json:"parts"`
		ProviderOptions json.RawMessage `json:"providerOptions"`
	}
	if row.Event == agent.EventSignal && row.Extra != "" && row.Extra != "{}" {
		if err := json.Unmarshal([]byte(row.Extra), &extra); err != nil {
			return f, fmt.Errorf("decode parts of frame %s: %w", row.ID, err)
		}
	}
	enc, err := agent.EncodeLogged(f, json.RawMessage(row.Attributes), json.RawMessage(row.Metadata), extra.Parts, extra.ProviderOptions)
	if err != nil {
		return f, fmt.Errorf("encode frame %s: %w", row.ID, err)
	}
	f.Encoded = enc
	return f, nil
}

func nullTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(t), Valid: true}
}

// errFrameExists aborts an append whose id is already logged, undoing the seq bump.
var errFrameExists = errors.New("frame already logged")

// AppendFrame appends f to its thread's log with the thread's next seq. A frame whose id
// is already logged is not appended again: the logged one is returned with appended
// false, which makes a retried delivery a no-op.
func (s *Frames) AppendFrame(ctx context.Context, f agent.Frame) (agent.Frame, bool, error) {
	var out agent.Frame
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var inserted bool
		var err error
		out, inserted, err = s.appendFrameTx(ctx, tx, f)
		if err == nil && !inserted {
			err = errFrameExists
		}
		return err
	})
	if errors.Is(err, errFrameExists) {
		existing, gerr := s.GetFrame(ctx, f.Thread, f.ID)
		return existing, false, gerr
	}
	if err != nil {
		return agent.Frame{}, false, fmt.Errorf("append frame %s to %s: %w", f.ID, f.Thread, err)
	}
	return out, true, nil
}

// appendFrameTx takes the thread's next seq (locking the thread row, which orders the
// thread's appends across transactions) and inserts the frame. inserted is false when the
// id was logged already; the seq taken is then left as a gap unless the caller rolls
// back (readers only ever ask for seq > cursor, so gaps are harmless).
func (s *core) appendFrameTx(ctx context.Context, tx *sqlx.Tx, f agent.Frame) (agent.Frame, bool, error) {
	k := f.Thread
	var seq int64
	err := s.writeTx(tx).get(ctx, &seq, qNextSeq, k.Agent, k.Resource, k.Thread, micros(f.CreatedAt), micros(f.CreatedAt))
	if err != nil {
		return f, false, fmt.Errorf("next seq of %s: %w", k, err)
	}
	f.Seq = seq
	inserted, err := s.insertFrameTx(ctx, tx, f)
	return f, inserted, err
}

// insertFrameTx inserts a frame whose seq the caller took; false when its id is logged.
func (s *core) insertFrameTx(ctx context.Context, tx *sqlx.Tx, f agent.Frame) (bool, error) {
	_, ok, err := s.insertFrameRowTx(ctx, tx, f)
	return ok, err
}

// insertFrameRowTx appends f and returns the row as stored, from which the frame handed
// to live subscribers is built: it equals what a read of the log gives.
func (s *core) insertFrameRowTx(ctx context.Context, tx *sqlx.Tx, f agent.Frame) (frameRow, bool, error) {
	row, err := storedFrameRow(f)
	if err != nil {
		return row, false, err
	}
	res, err := s.writeTx(tx).exec(ctx, qInsertFrame, row.Agent, row.Resource, row.Thread, row.Seq, row.ID, row.Event, row.RunID,
		row.Action, row.Type, row.TagName, row.Contents,
		row.Attributes, row.Metadata, row.XML, row.RecordIDs, row.RunStatus, row.Origin, row.SignalCreatedAt, row.AcceptedAt, row.CreatedAt,
		row.Extra)
	if err != nil {
		return row, false, fmt.Errorf("insert frame: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return row, false, fmt.Errorf("insert frame: %w", err)
	}
	return row, n == 1, nil
}

// storedFrameRow is the row f is logged as.
func storedFrameRow(f agent.Frame) (frameRow, error) {
	k := f.Thread
	attrs, err := json.Marshal(nonNilAttrs(f.Signal.Attributes))
	if err != nil {
		return frameRow{}, fmt.Errorf("encode attributes: %w", err)
	}
	meta := f.Signal.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return frameRow{}, fmt.Errorf("encode metadata: %w", err)
	}
	ids := f.RecordIDs
	if ids == nil {
		ids = []string{}
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return frameRow{}, fmt.Errorf("encode record ids: %w", err)
	}
	extra, err := json.Marshal(signalExtra{Parts: f.Signal.Parts, ProviderOptions: f.Signal.ProviderOptions})
	if err != nil {
		return frameRow{}, fmt.Errorf("encode parts: %w", err)
	}
	return frameRow{Agent: cleanText(k.Agent), Resource: cleanText(k.Resource), Thread: cleanText(k.Thread), Seq: f.Seq,
		ID: cleanText(f.ID), Event: f.Event, RunID: cleanText(f.RunID), Action: string(f.Behavior),
		Type: cleanText(string(f.Signal.Type)), TagName: cleanText(f.Signal.TagName), Contents: cleanText(f.Signal.Contents),
		Attributes: string(attrs), Metadata: string(metaJSON), XML: cleanText(f.XML), RecordIDs: string(idsJSON),
		RunStatus: f.RunStatus, Origin: f.Origin, SignalCreatedAt: nullTime(f.Signal.CreatedAt), AcceptedAt: nullTime(f.Signal.AcceptedAt),
		CreatedAt: micros(f.CreatedAt), Extra: string(inbox.CleanJSON(extra))}, nil
}

func nonNilAttrs(a inbox.Attributes) inbox.Attributes {
	if a == nil {
		return inbox.Attributes{}
	}
	return a
}

// GetFrame returns the frame k logged under id (ids are unique per thread), or
// inbox.ErrNotFound.
func (s *Frames) GetFrame(ctx context.Context, k inbox.ThreadKey, id string) (agent.Frame, error) {
	var row frameRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+frameColumns+` FROM signals
		WHERE agent = ? AND resource_id = ? AND thread_id = ? AND id = ?`), k.Agent, k.Resource, k.Thread, id)
	if errors.Is(err, sql.ErrNoRows) {
		return agent.Frame{}, fmt.Errorf("frame %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return agent.Frame{}, fmt.Errorf("get frame %s: %w", id, err)
	}
	return row.frame()
}

// FramesAfter returns up to limit frames of k with seq > after, in order.
func (s *Frames) FramesAfter(ctx context.Context, k inbox.ThreadKey, after int64, limit int) ([]agent.Frame, error) {
	var rows []frameRow
	err := s.readSelect(ctx, &rows, qFramesAfter, k.Agent, k.Resource, k.Thread, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read log of %s after %d: %w", k, after, err)
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

// LastSeq is the seq of the thread's newest frame (0 for none).
func (s *Frames) LastSeq(ctx context.Context, k inbox.ThreadKey) (int64, error) {
	var seq sql.NullInt64
	err := s.r.GetContext(ctx, &seq, s.q(`SELECT MAX(seq) FROM signals WHERE agent = ? AND resource_id = ? AND thread_id = ?`),
		k.Agent, k.Resource, k.Thread)
	if err != nil {
		return 0, fmt.Errorf("read last seq of %s: %w", k, err)
	}
	return seq.Int64, nil
}

// lockThread creates the thread row if needed and, on PostgreSQL, locks it for the
// transaction. Everything that changes a thread's runs, records or log takes this lock
// first, so they never deadlock on one another.
func (s *core) lockThread(ctx context.Context, tx *sqlx.Tx, k inbox.ThreadKey, now time.Time) error {
	_, err := s.writeTx(tx).exec(ctx, qLockThread, k.Agent, k.Resource, k.Thread, micros(now), micros(now))
	if err != nil {
		return fmt.Errorf("lock thread %s: %w", k, err)
	}
	return nil
}

// trueLit is the dialect's boolean true, for predicates partial indexes must match.
func (s *core) trueLit() string {
	if s.driver == DriverPostgres {
		return "TRUE"
	}
	return "1"
}
