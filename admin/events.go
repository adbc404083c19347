package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/telemetry"
)

var eventParams = []string{"source", "connector", "type", "kind", "status", "duplicate", "since", "until", "limit", "cursor"}

// eventFilter reads the event filters; kind is another name for type (a generic
// event's type is its kind).
func eventFilter(p *params) inbox.EventFilter {
	f := inbox.EventFilter{
		Source: p.text("source"), Connector: p.text("connector"), Type: p.text("type"),
		Status: p.eventStatus("status"), Duplicate: p.boolean("duplicate"),
		Since: p.time("since"), Until: p.time("until"), Limit: p.limit(), Cursor: p.cursor(),
	}
	if kind := p.text("kind"); kind != "" {
		if f.Type != "" && f.Type != kind {
			p.fail("kind: names the event type too; got type %q and kind %q", f.Type, kind)
		}
		f.Type = kind
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		p.fail("until: must be after since")
	}
	return f
}

// EventPage is one page of GET /events.
type EventPage struct {
	Events     []inbox.Event `json:"events"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// Events lists events newest first, bodies omitted, with GET /events' query
// parameters; a bad parameter is a 400 naming it.
func (a *API) Events(ctx context.Context, q url.Values) (EventPage, error) {
	p := readParams(q, eventParams...)
	f := eventFilter(p)
	if p.err != nil {
		return EventPage{}, p.err
	}
	events, next, err := a.d.Store.ListEvents(ctx, f)
	if err != nil {
		return EventPage{}, err
	}
	if events == nil {
		events = []inbox.Event{}
	}
	return EventPage{Events: events, NextCursor: next}, nil
}

// listEvents is GET /events.
func (a *API) listEvents(c echo.Context) error {
	page, err := a.Events(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// EventDetail is one stored event with its body: text when it is UTF-8 (JSON, mail),
// base64 otherwise. Explain takes it back as a sample as it is.
type EventDetail struct {
	inbox.Event
	Body       *string `json:"body,omitempty"`
	BodyBase64 string  `json:"bodyBase64,omitempty"`
	// CreatedRecords are the records this event created (merges keep their first event).
	CreatedRecords []inbox.Record `json:"createdRecords"`
	// TraceID is the trace the event arrived in, TraceURL its link ("": none).
	TraceID  string `json:"traceId,omitempty"`
	TraceURL string `json:"traceUrl,omitempty"`
}

func (a *API) getEvent(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	out, err := a.Event(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// Event is GET /events/{id}: the event with its body and the records it created.
func (a *API) Event(ctx context.Context, id string) (EventDetail, error) {
	id, err := checkID("id", id)
	if err != nil {
		return EventDetail{}, err
	}
	ev, err := a.d.Store.GetEvent(ctx, id)
	if err != nil {
		return EventDetail{}, notFound(err, "event", id)
	}
	recs, _, err := a.d.Store.ListRecords(ctx, inbox.RecordFilter{EventID: id, Limit: inbox.MaxPageSize})
	if err != nil {
		return EventDetail{}, err
	}
	out := EventDetail{Event: ev, CreatedRecords: recs, TraceID: inbox.TraceIDOf(ev.TraceParent)}
	out.TraceURL = telemetry.TraceURL(a.d.TraceURL, out.TraceID)
	if out.CreatedRecords == nil {
		out.CreatedRecords = []inbox.Record{}
	}
	if utf8.Valid(ev.Body) {
		s := string(ev.Body)
		out.Body = &s
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(ev.Body)
	}
	return out, nil
}

// ReplayResult is what one replay stored: a new event (replayOf the original) and the
// records it created or merged into.
type ReplayResult struct {
	ReplayOf string                `json:"replayOf"`
	EventID  string                `json:"eventId"`
	Status   inbox.EventStatus     `json:"status"`
	Error    string                `json:"error,omitempty"`
	Records  []inbox.RecordOutcome `json:"records"`
}

// replayEvent is POST /events/{id}/replay.
func (a *API) replayEvent(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	res, err := a.ReplayEvent(c.Request().Context(), id, tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// ReplayEvent replays one stored event; by names the admin token in the log.
func (a *API) ReplayEvent(ctx context.Context, id, by string) (ReplayResult, error) {
	id, err := checkID("id", id)
	if err != nil {
		return ReplayResult{}, err
	}
	ev, err := a.d.Store.GetEvent(ctx, id)
	if err != nil {
		return ReplayResult{}, notFound(err, "event", id)
	}
	res, err := a.replay(ctx, ev)
	if err != nil {
		return ReplayResult{}, err
	}
	a.log.Info("event replayed", "token", by, "event_id", id, "replay_id", res.EventID,
		"status", string(res.Status), "records", len(res.Records))
	return res, nil
}

type replayList struct {
	Replayed []ReplayResult `json:"replayed"`
	// Skipped counts listed events that are replays themselves (replays=true includes them).
	Skipped    int    `json:"skipped"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// replayEvents is POST /events/replay with the filters of GET /events: one page of
// matching events (limit, default 50) is replayed, oldest first so merges happen in
// their original order. nextCursor continues with older events; the replays are newer
// than every listed event, so they never show up in later pages.
func (a *API) replayEvents(c echo.Context) error {
	p := readParams(c.QueryParams(), append(eventParams, "replays")...)
	f := eventFilter(p)
	replays := p.boolean("replays")
	if p.err != nil {
		return p.err
	}
	ctx := c.Request().Context()
	events, next, err := a.d.Store.ListEvents(ctx, f)
	if err != nil {
		return err
	}
	out := replayList{Replayed: []ReplayResult{}, NextCursor: next}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].ReplayOf != "" && (replays == nil || !*replays) {
			out.Skipped++
			continue
		}
		ev, err := a.d.Store.GetEvent(ctx, events[i].ID) // the listing omits bodies
		if err != nil {
			return err
		}
		res, err := a.replay(ctx, ev)
		if err != nil {
			return err
		}
		out.Replayed = append(out.Replayed, res)
	}
	a.log.Info("events replayed", "token", tokenName(c), "replayed", len(out.Replayed), "skipped", out.Skipped)
	return c.JSON(http.StatusOK, out)
}

// replay stores orig again as a new event through today's routes and policy. The copy
// has no delivery id, so provider idempotency does not turn it away, and ReplayOf
// records where it came from. An event that no longer parses is stored too, as
// invalid or ignored with the reason.
func (a *API) replay(ctx context.Context, orig inbox.Event) (ReplayResult, error) {
	ev := &inbox.Event{Source: orig.Source, Connector: orig.Connector, Type: orig.Type,
		Headers: maps.Clone(orig.Headers), Body: orig.Body, ReplayOf: orig.ID}
	items, status, reason := parseEvent(ctx, a.d.Parsers, ev)
	ev.Status, ev.Error = status, reason
	rec := &recordingIngester{next: a.d.Inbox}
	out, err := connectors.NewPipeline(a.router, rec, a.d.Log).Ingest(ctx, ev, items)
	if err != nil {
		return ReplayResult{}, fmt.Errorf("replay event %s: %w", orig.ID, err)
	}
	res := ReplayResult{ReplayOf: orig.ID, EventID: out.EventID, Status: out.Status, Error: ev.Error, Records: rec.res.Records}
	if res.Records == nil {
		res.Records = []inbox.RecordOutcome{}
	}
	return res, nil
}

// recordingIngester keeps the inbox's answer, which the pipeline reduces to a count.
type recordingIngester struct {
	next connectors.Ingester
	res  inbox.IngestResult
}

func (r *recordingIngester) Ingest(ctx context.Context, ev *inbox.Event, ns []inbox.Notification) (inbox.IngestResult, error) {
	res, err := r.next.Ingest(ctx, ev, ns)
	r.res = res
	return res, err
}

// parseEvent runs the event's connector parse step. What it cannot turn into items
// comes back as the status the event is stored with and the reason.
func parseEvent(ctx context.Context, parsers Parsers, ev *inbox.Event) ([]connectors.Item, inbox.EventStatus, string) {
	p, ok := parsers[ev.Source]
	if !ok {
		return nil, inbox.EventInvalid, fmt.Sprintf("no connector parses %s events", ev.Source)
	}
	items, err := p.Items(ctx, ev)
	var nm *connectors.NotMapped
	switch {
	case errors.As(err, &nm):
		return nil, inbox.EventIgnored, nm.Reason
	case err != nil:
		return nil, inbox.EventInvalid, err.Error()
	}
	return items, "", ""
}
