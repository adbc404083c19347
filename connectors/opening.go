package connectors

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
)

// Opening is the start every HTTP connector shares: find the connector the path
// names, check what must be present before anything can be verified, read the body
// within the limit, verify. Only what passes all four reaches a parser; a parser
// never answers 400 (a verified body it cannot read is stored as invalid).
type Opening[C any] struct {
	Source string
	Conns  map[string]C
	// Precheck, when set, refuses a request before its body is read: a 404 for a
	// connector that takes no HTTP events, a 400 for a missing required header.
	Precheck func(conn C, h http.Header) error
	// Secrets are the keys a connector verifies with, current first, then during a
	// rotation the previous one: a request signed with any of them is authentic.
	Secrets func(conn C) [][]byte
	// Verify says why a request is not authentic under one secret; nil when it is.
	// Callers answer 401 without the reason; the log keeps it and the connector's
	// refusals keep its Reason (ReasonOf).
	Verify func(conn C, secret []byte, h http.Header, body []byte, now time.Time) error
	// SecretUsed, when set, counts which secret verified a request ("source/name",
	// "current" or "previous"), so a rotation's previous secret can be retired once it
	// is no longer used.
	SecretUsed func(connector, slot string)
	// LogHeader is logged with a rejection (the provider's delivery id).
	LogHeader string
	Log       *slog.Logger
	Now       func() time.Time
}

// Delivery is a request that passed the opening.
type Delivery[C any] struct {
	Name   string // the connector's configured name
	Conn   C
	Header http.Header
	Body   []byte
	At     time.Time // when it was verified: the event's receivedAt
}

// Open runs the shared steps on c's request.
func (o *Opening[C]) Open(c echo.Context) (*Delivery[C], error) {
	name := c.Param("connector")
	conn, ok := o.Conns[name]
	if !ok {
		return nil, server.NotFound("no %s connector named %q", o.Source, name)
	}
	req := c.Request()
	if o.Precheck != nil {
		if err := o.Precheck(conn, req.Header); err != nil {
			markRefused(c, refusedBefore(err))
			return nil, err
		}
	}
	body, err := ReadBody(c)
	if err != nil {
		markRefused(c, refusedBefore(err))
		return nil, err
	}
	now := o.Now()
	slot, err := o.verify(name, conn, req.Header, body, now)
	// Only a verified request continues the trace its traceparent names; the verify
	// span, run before the server span could start, is dated after the fact.
	var ctx context.Context
	if err != nil {
		ctx = server.RootTrace(c)
	} else {
		ctx = server.ContinueTrace(c)
	}
	o.verifySpan(ctx, now, name, slot, err)
	if err != nil {
		attrs := []any{"connector", name, "reason", err.Error(), "remote_ip", c.RealIP()}
		if o.LogHeader != "" {
			attrs = append(attrs, "delivery_id", Truncate(req.Header.Get(o.LogHeader), 200))
		}
		o.Log.WarnContext(ctx, "signature rejected", attrs...)
		markRefused(c, string(ReasonOf(err)))
		return nil, server.Unauthorized()
	}
	return &Delivery[C]{Name: name, Conn: conn, Header: req.Header, Body: body, At: now.UTC()}, nil
}

// verifySpan records the verification that began at start, under ctx's span.
func (o *Opening[C]) verifySpan(ctx context.Context, start time.Time, name, slot string, err error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	_, span := startSpan(ctx, "verify", trace.WithTimestamp(start),
		trace.WithAttributes(AttrConnector.String(name)))
	if err != nil {
		// The reason stays in the log: a span may leave the operator's hands.
		span.SetStatus(codes.Error, "not authentic")
	} else {
		span.SetAttributes(AttrSecretSlot.String(slot))
	}
	span.End(trace.WithTimestamp(o.Now()))
}

// verify tries each of the connector's secrets in turn and names the slot of the one
// that verified. A refusal reports the current secret's reason: the previous one's
// would only repeat or muddle it.
func (o *Opening[C]) verify(name string, conn C, h http.Header, body []byte, now time.Time) (string, error) {
	var first error
	for i, key := range o.Secrets(conn) {
		err := o.Verify(conn, key, h, body, now)
		if err == nil {
			if o.SecretUsed != nil {
				o.SecretUsed(o.Source+"/"+name, secret.Slot(i))
			}
			return secret.Slot(i), nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return "", ReasonNoSecret
	}
	return "", first
}

// refusedBefore is the reason a request refused before verification is recorded with:
// the server's own message (a precheck's, a limit's), written by the gateway from
// headers' names and config, never from what the sender sent; "" for anything else
// (the status then names it).
func refusedBefore(err error) string {
	var se *server.Error
	if !errors.As(err, &se) {
		return ""
	}
	switch se.Status {
	case http.StatusRequestEntityTooLarge:
		return string(ReasonTooLarge)
	case http.StatusRequestTimeout:
		return string(ReasonTooSlow)
	}
	return se.Message
}
