package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
)

// RoutePath is where deliveries are posted; :connector is the configured name.
const RoutePath = "/webhooks/github/:connector"

// provenanceHeader is stored with an event the gateway read from GitHub's API rather
// than received signed; webhook deliveries never keep it (it is not a kept header).
const provenanceHeader = connectors.BackfillHeader

// keptHeaders are stored with the event; the signature never is.
func keptHeaders() []string {
	return []string{
		gh.EventTypeHeader, gh.DeliveryIDHeader, "X-GitHub-Hook-ID",
		"X-GitHub-Hook-Installation-Target-Type", "X-GitHub-Hook-Installation-Target-ID",
		"User-Agent", "Content-Type",
	}
}

// Handler serves POST /webhooks/github/:connector for every configured connector.
type Handler struct {
	conns    map[string]Config
	opening  connectors.Opening[Config]
	pipeline *connectors.Pipeline
	log      *slog.Logger
	ci       CIState
	own      reply.Own
	// posters learn, per connector, the account its replies are posted as, the way the
	// replier does; built only with own.
	posters map[string]replyConn
	repos   *seenRepos // nil: not recorded
}

// accountLookupTimeout bounds learning the account replies are posted as during a
// delivery: GitHub gives a delivery 10 seconds.
const accountLookupTimeout = 5 * time.Second

// Option configures a Handler.
type Option func(*Handler)

// WithCIState replaces the in-memory CI conclusion memory (e.g. with a database-backed one).
func WithCIState(s CIState) Option { return func(h *Handler) { h.ci = s } }

// WithOwnReplies recognises the gateway's own replies coming back as comment events
// (by the comment ids recorded when they were sent): they are stored ignored.
func WithOwnReplies(own reply.Own) Option { return func(h *Handler) { h.own = own } }

// WithSeenRepos records the repository of every verified delivery (a GitHub watch may
// name only a repository the connector receives events for), once per process.
func WithSeenRepos(s SeenRepos) Option {
	return func(h *Handler) { h.repos = &seenRepos{to: s, done: map[string]struct{}{}} }
}

// NewHandler validates the configs and builds the handler.
func NewHandler(cfgs []Config, p *connectors.Pipeline, log *slog.Logger, now func() time.Time, opts ...Option) (*Handler, error) {
	if err := connectors.ValidateConfigs("github", cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	h := &Handler{
		conns:    make(map[string]Config, len(cfgs)),
		pipeline: p,
		log:      log.With("component", "connector_github"),
		ci:       NewMemoryCIState(0),
	}
	for _, c := range cfgs {
		h.conns[c.Name] = c.WithDefaults()
	}
	for _, o := range opts {
		o(h)
	}
	if h.own != nil {
		h.posters = make(map[string]replyConn, len(h.conns))
		for name, c := range h.conns {
			rc, err := newReplyConn(c)
			if err != nil {
				return nil, err
			}
			h.posters[name] = rc
		}
	}
	h.opening = connectors.Opening[Config]{
		Source: "github", Conns: h.conns, Precheck: precheck, Verify: verify,
		Secrets: verifySecrets, SecretUsed: p.SecretUsed,
		LogHeader: gh.DeliveryIDHeader, Log: h.log, Now: now,
	}
	return h, nil
}

// precheck refuses, before the body is read, a request without the event type or
// the delivery id: without the id a captured body could be replayed as new.
func precheck(_ Config, hdr http.Header) error {
	for _, name := range []string{gh.EventTypeHeader, gh.DeliveryIDHeader} {
		if hdr.Get(name) == "" {
			return server.BadRequest("missing %s header", name)
		}
	}
	return nil
}

// verify accepts only a valid sha256 signature: go-github accepts a missing one when
// the secret is empty, and sha1 ones.
func verify(_ Config, key []byte, hdr http.Header, body []byte, _ time.Time) error {
	sig := hdr.Get(gh.SHA256SignatureHeader)
	if sig == "" {
		return fmt.Errorf("%w %s", connectors.ReasonSignatureMissing, gh.SHA256SignatureHeader)
	}
	if !strings.HasPrefix(sig, "sha256=") || gh.ValidateSignature(sig, body, key) != nil {
		return connectors.ReasonSignatureMismatch
	}
	return nil
}

func verifySecrets(cfg Config) [][]byte { return secret.Keys(cfg.VerifySecrets()) }

// Mount registers the route on e.
func (h *Handler) Mount(e *echo.Echo) { e.POST(RoutePath, h.Serve) }

// Serve verifies, stores and routes one delivery. The event is stored before any
// 2xx; unknown or unmapped event types are stored and answered 202, and so is a
// verified payload that cannot be read (invalid, kept for replay).
func (h *Handler) Serve(c echo.Context) error {
	d, err := h.opening.Open(c)
	if err != nil {
		return err
	}
	out, ping, err := h.ingest(c.Request().Context(), d.Conn, d.Header, d.Body, d.At, VerifiedBy)
	if err != nil {
		return err
	}
	if ping {
		return c.JSON(http.StatusOK, out)
	}
	return c.JSON(out.HTTPStatus(), out)
}

// ingest parses, routes and stores one delivery of cfg: a verified webhook's, or one
// backfill read from GitHub's API. verifiedBy is the provenance its items carry. ping
// reports a ping that was not invalid (answered 200 whatever was routed).
func (h *Handler) ingest(ctx context.Context, cfg Config, hdr http.Header, body []byte, at time.Time, verifiedBy string) (connectors.Outcome, bool, error) {
	eventType, delivery := hdr.Get(gh.EventTypeHeader), hdr.Get(gh.DeliveryIDHeader)
	ev := &inbox.Event{
		Source:     "github",
		Connector:  cfg.Name,
		DeliveryID: delivery,
		Type:       eventType,
		Headers:    connectors.KeepHeaders(hdr, keptHeaders()...),
		Body:       body,
		ReceivedAt: at,
	}
	if verifiedBy == VerifiedBy {
		// A signed body replayed under a new delivery id is still the same delivery.
		ev.BodyDigest = inbox.Digest(body)
	} else {
		// Read from GitHub, not signed: the stored event says so, for replay and explain.
		ev.Headers[provenanceHeader] = verifiedBy
	}
	var items []connectors.Item
	parse := connectors.StartParse(ctx)
	payload, err := formPayload(hdr.Get(echo.HeaderContentType), body)
	var dec *decoded
	if err == nil {
		dec = decodePayload(eventType, payload)
		h.repos.note(ctx, h.log, cfg.Name, dec.repo, at)
	}
	if err != nil {
		ev.Status, ev.Error = inbox.EventInvalid, err.Error()
	} else if dec.reason == malformedJSON {
		ev.Status, ev.Error = inbox.EventInvalid, malformedReason(hdr.Get(echo.HeaderContentType), body)
	} else if own, err := h.ownReply(ctx, &cfg, eventType, dec); err != nil {
		connectors.EndParse(parse, eventType, 0)
		return connectors.Outcome{}, false, err
	} else if own {
		// Before any other rule: the agent never hears itself.
		ev.Body, ev.Status, ev.Error = payload, inbox.EventIgnored, reply.OwnReason
	} else {
		ev.Body = payload
		items, ev.Status, ev.Error = h.parse(ctx, &cfg, eventType, delivery, verifiedBy, dec, h.ci)
	}
	connectors.EndParse(parse, eventType, len(items))
	if ev.Status == inbox.EventInvalid {
		h.log.WarnContext(ctx, "payload not decodable", "connector", cfg.Name, "event_type", eventType,
			"delivery_id", delivery, "error", ev.Error)
	}
	if eventType == "ping" && ev.Status != inbox.EventInvalid {
		out, err := h.pipeline.Ingest(ctx, ev, nil)
		return out, true, err
	}
	out, err := h.pipeline.Ingest(ctx, ev, items)
	return out, false, err
}

// parse maps one delivery's JSON payload. What is stored without items comes back as
// a status and its reason: ignored for a type the connector does not map, invalid for
// a payload that is not JSON or not even leniently of its event's shape (kept: a
// later version may replay it).
func (h *Handler) parse(ctx context.Context, cfg *Config, eventType, delivery, verifiedBy string, d *decoded, ci CIState) ([]connectors.Item, inbox.EventStatus, string) {
	if d.event == nil {
		return nil, d.status, d.reason
	}
	if len(d.dropped) > 0 {
		h.log.InfoContext(ctx, "payload read leniently", "event_type", eventType, "delivery_id", delivery,
			"fields_left_out", strings.Join(d.dropped, ","))
	}
	m := mapper{cfg: cfg, ci: ci, log: h.log, event: eventType, delivery: delivery, verifiedBy: verifiedBy}
	return m.items(ctx, d.event), "", ""
}

// Items turns a stored or sample delivery back into items without verifying it, for
// replay and explain. The CI memory is read but never written: a replayed or explained
// conclusion must not change what the next live run is compared with.
func (h *Handler) Items(ctx context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	cfg, ok := h.conns[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no github connector named %q", ev.Connector)
	}
	eventType := ev.Type
	if eventType == "" {
		eventType = connectors.Header(ev.Headers, gh.EventTypeHeader)
	}
	if eventType == "" {
		return nil, fmt.Errorf("no event type: set the %s header", gh.EventTypeHeader)
	}
	payload := ev.Body
	if !json.Valid(payload) {
		// A sample may be the raw form-encoded request; stored events hold the JSON.
		p, err := formPayload(connectors.Header(ev.Headers, echo.HeaderContentType), payload)
		if err != nil {
			return nil, err
		}
		payload = p
	}
	dec := decodePayload(eventType, payload)
	if own, err := h.ownReply(ctx, &cfg, eventType, dec); err != nil {
		return nil, err
	} else if own {
		return nil, &connectors.NotMapped{Reason: reply.OwnReason}
	}
	delivery := ev.DeliveryID
	if delivery == "" {
		delivery = connectors.Header(ev.Headers, gh.DeliveryIDHeader)
	}
	verifiedBy := VerifiedBy
	if connectors.Header(ev.Headers, provenanceHeader) == VerifiedByAPI {
		verifiedBy = VerifiedByAPI
	}
	items, status, reason := h.parse(ctx, &cfg, eventType, delivery, verifiedBy, dec, readOnlyCI{h.ci})
	switch {
	case status == inbox.EventInvalid:
		return nil, errors.New(reason)
	case status == inbox.EventIgnored:
		return nil, &connectors.NotMapped{Reason: reason}
	}
	return items, nil
}

// ownReply reports whether a comment event is about one of the gateway's own replies:
// its comment id is one a reply was recorded as, or it carries a reply's hidden marker
// and was written by the account replies are posted as (the event can overtake the
// outbox recording the id). A marker in anyone else's comment proves nothing: at most
// it would silence its own author. Payloads that do not decode are not (parse stores
// them invalid).
func (h *Handler) ownReply(ctx context.Context, cfg *Config, eventType string, d *decoded) (bool, error) {
	if h.own == nil || (eventType != "issue_comment" && eventType != "pull_request_review_comment") {
		return false, nil
	}
	c := d.comment
	if c == nil || c.ID <= 0 {
		return false, nil
	}
	author, marked := c.Login, c.marked()
	if marked && cfg.isBotLogin(author) {
		return true, nil
	}
	// This App's own bot, as the payload names it: a person acting through the App
	// (a user-to-server token) is not the App.
	if marked && cfg.App != nil {
		if appID, slug := d.commentApp(); appID == cfg.App.ID && slug != "" && strings.EqualFold(author, slug+"[bot]") {
			return true, nil
		}
	}
	id := strconv.FormatInt(c.ID, 10)
	own, err := h.own.OwnReply(ctx, Source, cfg.Name, id)
	if err != nil {
		return false, fmt.Errorf("check whether comment %s is an own reply: %w", id, err)
	}
	if own || !marked || cfg.BotLogin != "" {
		return own, nil
	}
	account := h.postedAs(ctx, cfg, id)
	return account != "" && strings.EqualFold(author, account), nil
}

// postedAs is the account cfg's replies are posted as (the token's user, the App's
// bot), learned once as the replier learns it; "" when the connector posts no replies
// or the lookup failed (logged, and asked again next time): the comment is then judged
// by its recorded id alone.
func (h *Handler) postedAs(ctx context.Context, cfg *Config, commentID string) string {
	rc, ok := h.posters[cfg.Name]
	if !ok || rc.client == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, accountLookupTimeout)
	defer cancel()
	login, err := rc.login(ctx)
	if err != nil {
		h.log.Warn("own reply account unknown: a marked comment is judged by its recorded id alone",
			"connector", cfg.Name, "comment_id", commentID, "error", err)
		return ""
	}
	return login
}

// readOnlyCI reads CI conclusions and drops writes.
type readOnlyCI struct{ CIState }

func (readOnlyCI) SetConclusion(context.Context, string, string) error { return nil }

// formType is the content type of hooks configured to send a form: the event's JSON
// is the body's payload field.
const formType = "application/x-www-form-urlencoded"

// formPayload returns the JSON document of a delivery: the body itself, or its
// payload= field for hooks configured with the form content type. An error says what
// was received instead (never quoting the body).
func formPayload(contentType string, body []byte) ([]byte, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt != formType {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	switch {
	case err == nil && form.Has("payload"):
		return []byte(form.Get("payload")), nil
	case json.Valid(body):
		// curl -d and friends label a JSON body as a form.
		return nil, errors.New("received a JSON body under content type " + formType +
			": send it with Content-Type: application/json (GitHub's form deliveries carry the JSON in a payload field)")
	case err != nil:
		return nil, errors.New("received a body under content type " + formType + " that is not a valid form")
	}
	return nil, errors.New("received a form-encoded body (content type " + formType + ") without a payload field: " +
		"GitHub's form deliveries carry the event's JSON in payload=")
}

// malformedReason says what a body that is not JSON was instead: a form under another
// content type (a proxy that rewrote the header), the content type it came with.
func malformedReason(contentType string, body []byte) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if mt == formType {
		return "malformed JSON in the form's payload field"
	}
	named := "no content type"
	switch {
	case contentType != "" && err != nil:
		named = "an unreadable content type"
	case mt != "":
		named = "content type " + connectors.Truncate(mt, 100)
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Has("payload") {
		return "received a form-encoded body (payload=…) under " + named +
			": a proxy may have changed the content type; set the webhook's content type to application/json"
	}
	if mt == "" || mt == "application/json" {
		return malformedJSON
	}
	return malformedJSON + " (received " + named + ")"
}

// jsonObject reports whether a valid JSON document is an object: every GitHub
// payload is one.
func jsonObject(payload []byte) bool {
	trimmed := bytes.TrimSpace(payload)
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// jsonProblem names what did not fit without echoing payload content.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return "a timestamp is not RFC 3339"
	}
	return "unexpected shape"
}
