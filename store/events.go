package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/signalgate/signalgate/inbox"
)

const eventColumns = `id, source, connector, delivery_id, type, headers, body, received_at, status, error, replay_of, records, redeliveries, trace_parent, body_encoding`

type eventRow struct {
	ID          string         `db:"id"`
	Source      string         `db:"source"`
	Connector   string         `db:"connector"`
	DeliveryID  sql.NullString `db:"delivery_id"`
	Type        string         `db:"type"`
	Headers     string         `db:"headers"`
	Body        []byte         `db:"body"`
	ReceivedAt  int64          `db:"received_at"`
	Status      string         `db:"status"`
	Error       string         `db:"error"`
	ReplayOf    sql.NullString `db:"replay_of"`
	Records     int            `db:"records"`
	Redelivers  int            `db:"redeliveries"`
	TraceParent string         `db:"trace_parent"`
	BodyEnc     string         `db:"body_encoding"`
}

// event is the row as an event; body restores a stored body (nil when the row was
// read without one).
func (row *eventRow) event(body *bodyCodec) (inbox.Event, error) {
	ev := inbox.Event{
		ID: row.ID, Source: row.Source, Connector: row.Connector, DeliveryID: row.DeliveryID.String,
		Type: row.Type, Body: row.Body, ReceivedAt: fromMicros(row.ReceivedAt),
		Status: inbox.EventStatus(row.Status), Error: row.Error, ReplayOf: row.ReplayOf.String, Records: row.Records, Redeliveries: row.Redelivers,
		TraceParent: row.TraceParent,
	}
	if err := json.Unmarshal([]byte(row.Headers), &ev.Headers); err != nil {
		return ev, fmt.Errorf("decode headers of event %s: %w", row.ID, err)
	}
	if body != nil {
		b, err := body.unpack(row.Body, row.BodyEnc)
		if err != nil {
			return inbox.Event{}, fmt.Errorf("read body of event %s: %w", row.ID, err)
		}
		ev.Body = b
	}
	return ev, nil
}

// GetEvent returns one stored event (with its body) or inbox.ErrNotFound.
func (s *Explain) GetEvent(ctx context.Context, id string) (inbox.Event, error) {
	var row eventRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+eventColumns+` FROM events WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return inbox.Event{}, fmt.Errorf("event %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return inbox.Event{}, fmt.Errorf("get event %s: %w", id, err)
	}
	return row.event(s.body)
}

// CountEvents counts stored events (tests and health).
func (s *Admin) CountEvents(ctx context.Context) (int, error) {
	var n int
	if err := s.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM events`); err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return n, nil
}
