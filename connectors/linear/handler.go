package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
)

// RoutePath is where deliveries are posted; :connector is the configured name.
const RoutePath = "/webhooks/linear/:connector"

// lookupTimeout bounds the API look-ups one delivery may make (who the agent is, whether
// an author is a member): Linear gives a webhook 5 seconds.
const lookupTimeout = 4 * time.Second

// memberTTL is how long an author's membership is remembered.
const memberTTL = 10 * time.Minute

// maxMembers bounds the remembered memberships of one connector.
const maxMembers = 10000

func keptHeaders() []string {
	return []string{DeliveryHeader, EventHeader, "User-Agent", "Content-Type"}
}

// conn is one configured connector with its API client (nil without credentials).
type conn struct {
	cfg     Config
	api     *client
	now     func() time.Time
	mu      sync.Mutex
	members map[string]memberSeen
}

type memberSeen struct {
	m  member
	at time.Time
}

// Handler serves POST /webhooks/linear/:connector for every configured connector.
type Handler struct {
	conns    map[string]*conn
	opening  connectors.Opening[*conn]
	pipeline *connectors.Pipeline
	log      *slog.Logger
	own      reply.Own
	offline  bool
}

// Option configures a Handler.
type Option func(*Handler)

// WithOwnReplies recognises the gateway's own answers coming back as events (by the
// comment ids recorded when they were sent): they are stored ignored.
func WithOwnReplies(own reply.Own) Option { return func(h *Handler) { h.own = own } }

// WithOffline makes the handler call no outside API (explain without --connect): the
// workspace is organization_id's (any, when it is not set) and every user a member.
func WithOffline() Option { return func(h *Handler) { h.offline = true } }

// NewHandler validates the configs and builds the handler. The handler asks Linear's
// API who the credentials act as (the agent, whose own comments and activities it
// never routes, and its workspace) and whether an author is a guest.
func NewHandler(cfgs []Config, p *connectors.Pipeline, log *slog.Logger, now func() time.Time, opts ...Option) (*Handler, error) {
	if err := connectors.ValidateConfigs(Source, cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	h := &Handler{conns: make(map[string]*conn, len(cfgs)), pipeline: p, log: log.With("component", "connector_linear")}
	for _, o := range opts {
		o(h)
	}
	for _, c := range cfgs {
		c = c.WithDefaults()
		cn := &conn{cfg: c, now: now, members: map[string]memberSeen{}}
		if !h.offline {
			cn.api = newClient(c, now)
		}
		h.conns[c.Name] = cn
	}
	h.opening = connectors.Opening[*conn]{
		Source: Source, Conns: h.conns, Precheck: precheck,
		Verify: func(_ *conn, key []byte, hdr http.Header, body []byte, at time.Time) error {
			return Verify(key, hdr, body, at)
		},
		Secrets:    func(c *conn) [][]byte { return secret.Keys(c.cfg.VerifySecrets()) },
		SecretUsed: p.SecretUsed, LogHeader: DeliveryHeader, Log: h.log, Now: now,
	}
	return h, nil
}

// precheck refuses, before the body is read, a request without a delivery id: without
// it a captured body could be replayed as new.
func precheck(_ *conn, hdr http.Header) error {
	if hdr.Get(DeliveryHeader) == "" {
		return server.BadRequest("missing %s header", DeliveryHeader)
	}
	return nil
}

// Mount registers the route on e.
func (h *Handler) Mount(e *echo.Echo) { e.POST(RoutePath, h.Serve) }

// Serve verifies, stores and routes one delivery. Types the connector does not map are
// stored ignored (202), and so is a verified body it cannot read (invalid, kept for
// replay). When Linear's API cannot say what the gateway must know to let an author
// through (the workspace, a membership), the answer is 503 and Linear delivers again.
func (h *Handler) Serve(c echo.Context) error {
	d, err := h.opening.Open(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	delivery := d.Header.Get(DeliveryHeader)
	ev := &inbox.Event{
		Source: Source, Connector: d.Name, DeliveryID: delivery, Type: d.Header.Get(EventHeader),
		Headers: connectors.KeepHeaders(d.Header, keptHeaders()...), Body: d.Body,
		BodyDigest: inbox.Digest(d.Body), ReceivedAt: d.At,
	}
	parse := connectors.StartParse(ctx)
	p, err := h.parse(ctx, d.Conn, d.Body, delivery)
	if err != nil {
		connectors.EndParse(parse, ev.Type, 0)
		h.log.WarnContext(ctx, "delivery not judged: linear's api did not answer", "connector", d.Name,
			"delivery_id", delivery, "error", err.Error())
		return server.NewError(http.StatusServiceUnavailable, "unavailable",
			"the author of this delivery could not be checked with Linear's API; deliver it again later")
	}
	connectors.EndParse(parse, p.typ, len(p.items))
	if p.typ != "" {
		ev.Type = p.typ
	}
	ev.Status, ev.Error = p.status, p.reason
	if ev.Status == inbox.EventInvalid {
		h.log.WarnContext(ctx, "payload not decodable", "connector", d.Name, "delivery_id", delivery, "error", ev.Error)
	}
	return h.pipeline.Respond(c, ev, p.items)
}

// Items turns a stored or sample delivery back into items without verifying it, for
// replay and explain.
func (h *Handler) Items(ctx context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	c, ok := h.conns[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no linear connector named %q", ev.Connector)
	}
	delivery := ev.DeliveryID
	if delivery == "" {
		delivery = connectors.Header(ev.Headers, DeliveryHeader)
	}
	p, err := h.parse(ctx, c, ev.Body, delivery)
	switch {
	case err != nil:
		return nil, err
	case p.status == inbox.EventInvalid:
		return nil, errors.New(p.reason)
	case p.status == inbox.EventIgnored:
		return nil, &connectors.NotMapped{Reason: p.reason}
	}
	return p.items, nil
}

// parsed is what one delivery maps to: items, or the status and reason it is stored with.
type parsed struct {
	typ    string
	items  []connectors.Item
	status inbox.EventStatus
	reason string
}

// parse reads a delivery's body and maps it. An error is a look-up that failed: the
// delivery cannot be judged now.
func (h *Handler) parse(ctx context.Context, c *conn, body []byte, delivery string) (parsed, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return parsed{status: inbox.EventInvalid, reason: fmt.Sprintf("field %q has the wrong type", te.Field)}, nil
		}
		return parsed{status: inbox.EventInvalid, reason: "malformed JSON body"}, nil
	}
	if e.Type == "" {
		return parsed{status: inbox.EventInvalid, reason: "type: required"}, nil
	}
	p := parsed{typ: e.Type + "." + e.Action}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	who, err := c.identity(ctx)
	if err != nil {
		return p, err
	}
	if who.Organization != "" && !strings.EqualFold(e.OrganizationID, who.Organization) {
		p.status, p.reason = inbox.EventIgnored, reasonOtherWorkspace
		return p, nil
	}
	var s *spec
	switch e.Type {
	case "Issue":
		s, err = issueSpec(&e)
	case "Comment":
		s, err = commentSpec(&e)
	case "Project":
		s, err = projectSpec(&e)
	case agentSessionEventType:
		s, err = sessionSpec(&e)
	}
	switch {
	case err != nil:
		p.status, p.reason = inbox.EventInvalid, err.Error()
		return p, nil
	case s == nil:
		p.status, p.reason = inbox.EventIgnored, fmt.Sprintf("%s %s: %s", e.Type, e.Action, reasonNotMapped)
		return p, nil
	}
	own, err := h.ownEvent(ctx, c, who, &e, s)
	if err != nil {
		return p, err
	}
	if own != "" {
		// Before any other rule: the agent never hears itself.
		p.status, p.reason = inbox.EventIgnored, own
		return p, nil
	}
	if s.skip == "" {
		if s.skip, err = c.gate(ctx, &e, s); err != nil {
			return p, err
		}
	}
	p.items = []connectors.Item{c.item(s, delivery)}
	return p, nil
}

// identity is who the connector's credentials act as and the workspace it hears: the
// configured organization_id, else the credentials'. Without credentials the agent is
// not known (its own answers are recognised by their recorded ids alone).
func (c *conn) identity(ctx context.Context) (viewer, error) {
	if c.api == nil {
		return viewer{Organization: c.cfg.OrganizationID}, nil
	}
	v, err := c.api.whoAmI(ctx)
	if err != nil {
		return viewer{}, err
	}
	if c.cfg.OrganizationID != "" {
		v.Organization = c.cfg.OrganizationID
	}
	return v, nil
}

// ownEvent is the reason an event is the agent's own doing ("" when it is not): a
// comment or activity written as the agent (the viewer), or a comment an answer was
// recorded as; an issue or project change the agent made is its own unless it ends a
// watch.
func (h *Handler) ownEvent(ctx context.Context, c *conn, who viewer, e *envelope, s *spec) (string, error) {
	switch e.Type {
	case "Comment":
		if s.author != nil && who.ID != "" && s.author.ID == who.ID {
			return reply.OwnReason, nil
		}
		if h.own != nil {
			own, err := h.own.OwnReply(ctx, Source, c.cfg.Name, s.objectID)
			if err != nil {
				return "", fmt.Errorf("check whether comment %s is an own answer: %w", s.objectID, err)
			}
			if own {
				return reply.OwnReason, nil
			}
		}
	case agentSessionEventType:
		if who.ID != "" && e.AgentSession.AppUserID != "" && e.AgentSession.AppUserID != who.ID {
			return reasonOtherAgent, nil
		}
		if s.author != nil && who.ID != "" && s.author.ID == who.ID {
			return reply.OwnReason, nil
		}
	default:
		if s.author != nil && who.ID != "" && s.author.ID == who.ID && s.ends == "" {
			return reply.OwnReason, nil
		}
	}
	return "", nil
}

// gate is why an item's author may not reach the agent ("" when they may): what people
// write (comments, new issues, agent sessions) reaches it only from members of the
// workspace, and a session's prompts only from the person who started it. Changes of
// state (an issue moved, a project updated) pass whoever made them.
func (c *conn) gate(ctx context.Context, e *envelope, s *spec) (string, error) {
	switch {
	case s.kind == KindSessionPrompted:
		if s.author == nil || s.author.ID == "" || s.author.ID != e.AgentSession.CreatorID {
			return reasonNotCreator, nil
		}
	case s.kind == KindCommentCreated, s.kind == KindSessionCreated, s.kind == KindIssuePrefix+"create":
	default:
		return "", nil
	}
	if s.author == nil || s.author.ID == "" {
		return reasonNotMember, nil // an application, an integration, an external user
	}
	ok, err := c.member(ctx, s.author.ID)
	if err != nil || ok {
		return "", err
	}
	return reasonNotMember, nil
}

// member reports whether a user is a member of the workspace: not a guest (unless
// allow_guests), active, not an application. Without credentials every user of the
// workspace is taken for a member.
func (c *conn) member(ctx context.Context, id string) (bool, error) {
	if c.api == nil {
		return true, nil
	}
	now := c.now()
	c.mu.Lock()
	seen, ok := c.members[id]
	c.mu.Unlock()
	if !ok || now.Sub(seen.at) > memberTTL {
		m, err := c.api.user(ctx, id)
		if err != nil {
			return false, err
		}
		seen = memberSeen{m: m, at: now}
		c.mu.Lock()
		if len(c.members) >= maxMembers {
			clear(c.members)
		}
		c.members[id] = seen
		c.mu.Unlock()
	}
	return seen.m.Active && !seen.m.App && (!seen.m.Guest || c.cfg.AllowGuests), nil
}
