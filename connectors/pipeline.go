package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/telemetry"
)

// Pipeline routes a connector's items and stores the event with its notifications.
type Pipeline struct {
	router     *Router
	ingester   Ingester
	log        *slog.Logger
	overBudget func()
	secretUsed func(connector, slot string) // nil: not counted
	watches    WatchLookup                  // nil: no watches
	now        func() time.Time
}

// PipelineOption configures a Pipeline.
type PipelineOption func(*Pipeline)

// WithBudgetExceeded is called once for each event whose routes' `when`s ran out of
// the event's expression budget (the metric).
func WithBudgetExceeded(fn func()) PipelineOption {
	return func(p *Pipeline) { p.overBudget = fn }
}

// WithSecretUsed is called for every verified delivery with the connector
// ("source/name") and the slot of the secret that verified it (the metric).
func WithSecretUsed(fn func(connector, slot string)) PipelineOption {
	return func(p *Pipeline) { p.secretUsed = fn }
}

// SecretUsed reports which secret verified a delivery; the openings call it.
func (p *Pipeline) SecretUsed(connector, slot string) {
	if p != nil && p.secretUsed != nil {
		p.secretUsed(connector, slot)
	}
}

// WithClock sets the clock watches are judged live by for an event arriving without a
// receivedAt.
func WithClock(now func() time.Time) PipelineOption { return func(p *Pipeline) { p.now = now } }

// NewPipeline wires the router and the inbox.
func NewPipeline(router *Router, ingester Ingester, log *slog.Logger, opts ...PipelineOption) *Pipeline {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{router: router, ingester: ingester, log: log.With("component", "connectors"), overBudget: func() {}, now: time.Now}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Outcome is what an ingest endpoint answers.
type Outcome struct {
	EventID   string            `json:"eventId"`
	Duplicate bool              `json:"duplicate"`
	Status    inbox.EventStatus `json:"status"`
	Records   int               `json:"records"`
}

// HTTPStatus is 200 when something was routed (or the delivery was a duplicate),
// 202 when the event was stored but no route wanted it.
func (o Outcome) HTTPStatus() int {
	if o.Duplicate || o.Status == inbox.EventRouted {
		return http.StatusOK
	}
	return http.StatusAccepted
}

// Ingest routes items and stores ev with the notifications; it returns only after
// the inbox committed. Status: routed when a notification was made; ignored when
// there were no items (an unmapped type) or every item was skipped; unrouted
// otherwise. A status the connector set (ignored, invalid) is kept.
func (p *Pipeline) Ingest(ctx context.Context, ev *inbox.Event, items []Item) (Outcome, error) {
	var ns []inbox.Notification
	var routeErrs []error
	// Watches are live or not as of the event's arrival; the inbox dates an event that
	// has none with its own clock.
	at := ev.ReceivedAt
	if at.IsZero() {
		at = p.now().UTC()
	}
	if p.router != nil {
		var payload any
		if p.router.UsesPayload() {
			payload = ev.ExprPayload()
		}
		_, span := startSpan(ctx, "route")
		rt, err := p.router.RouteWatched(ctx, p.watches, payload, items, at)
		if err != nil {
			span.End()
			return Outcome{}, fmt.Errorf("route %s event %q: %w", ev.Source, ev.Type, err)
		}
		ns, routeErrs = rt.Notifications, rt.Errs
		if span.IsRecording() {
			span.SetAttributes(AttrNotifications.Int(len(ns)))
			span.End()
		}
		if slices.ContainsFunc(routeErrs, func(err error) bool { return errors.Is(err, condition.ErrBudgetExceeded) }) {
			p.overBudget()
		}
	}
	ev.Status, ev.Error = EventStatus(ev.Status, ev.Error, items, ns, routeErrs)
	// Every record made of the event points at the span it arrived under (the server
	// span of its request, an email's message span).
	if tp := telemetry.Traceparent(ctx); tp != "" {
		ev.TraceParent = tp
	}
	res, err := p.ingester.Ingest(ctx, ev, ns)
	if err != nil {
		return Outcome{}, fmt.Errorf("store %s event %q: %w", ev.Source, ev.Type, err)
	}
	for _, e := range routeErrs {
		p.log.WarnContext(ctx, "route skipped", "source", ev.Source, "connector", ev.Connector,
			"event_id", res.EventID, "error", e.Error())
	}
	out := Outcome{EventID: res.EventID, Duplicate: res.Duplicate, Status: ev.Status, Records: len(res.Records)}
	p.log.DebugContext(ctx, "event ingested", "source", ev.Source, "connector", ev.Connector, "event_type", ev.Type,
		"event_id", out.EventID, "delivery_id", ev.DeliveryID, "status", string(out.Status),
		"duplicate", out.Duplicate, "records", out.Records)
	return out, nil
}

// EventStatus is what an event is stored as, given its items and their routing:
// routed when a notification was made; ignored when there were no items (an unmapped
// type) or every item was skipped; unrouted otherwise. A status the connector set
// (ignored, invalid) and its reason are kept; otherwise the reason lists the skips and
// route errors. Ingest and the admin API's explain share it.
func EventStatus(status inbox.EventStatus, reason string, items []Item, ns []inbox.Notification, routeErrs []error) (inbox.EventStatus, string) {
	var skips []string
	for _, it := range items {
		if it.Skip != "" {
			skips = append(skips, it.Skip)
		}
	}
	if status == "" {
		switch {
		case len(ns) > 0:
			status = inbox.EventRouted
		case len(items) == 0 || len(skips) == len(items):
			status = inbox.EventIgnored
		default:
			status = inbox.EventUnrouted
		}
	}
	if reason == "" {
		for _, e := range routeErrs {
			skips = append(skips, e.Error())
		}
		reason = strings.Join(skips, "; ")
	}
	return status, reason
}

// Respond ingests and writes the outcome as JSON with its status code.
func (p *Pipeline) Respond(c echo.Context, ev *inbox.Event, items []Item) error {
	out, err := p.Ingest(c.Request().Context(), ev, items)
	if err != nil {
		return err
	}
	return c.JSON(out.HTTPStatus(), out)
}

// ReadBody reads the whole request body. Oversize bodies become 413 whichever
// limiter caught them: echo's BodyLimit middleware or an http.MaxBytesReader.
func ReadBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err == nil {
		return body, nil
	}
	var mbe *http.MaxBytesError
	var he *echo.HTTPError
	if errors.As(err, &mbe) || (errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge) {
		return nil, server.NewError(http.StatusRequestEntityTooLarge, "payload_too_large",
			"request body exceeds the configured body_limit")
	}
	// The server's own refusals (a body too slow: 408). The connection's failed read has
	// cancelled the request context by then too, so this comes first.
	var se *server.Error
	if errors.As(err, &se) {
		return nil, se
	}
	if ctxErr := c.Request().Context().Err(); ctxErr != nil {
		return nil, fmt.Errorf("read request body: %w", ctxErr)
	}
	return nil, server.BadRequest("%s", ReasonUnreadable)
}
