package slack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
)

// RoutePath is where Slack posts events; :connector is the configured name.
const RoutePath = "/webhooks/slack/:connector"

// Source is the notification source of every Slack item.
const Source = "slack"

// SignatureWindow is how far a request timestamp may be from now (Slack's and
// slack-go's fixed replay window).
const SignatureWindow = 5 * time.Minute

// Slack request headers.
const (
	HeaderSignature   = "X-Slack-Signature"
	HeaderTimestamp   = "X-Slack-Request-Timestamp"
	HeaderRetryNum    = "X-Slack-Retry-Num"
	HeaderRetryReason = "X-Slack-Retry-Reason"
	// HeaderNoRetry on a response tells Slack not to retry a request that can
	// never succeed.
	HeaderNoRetry = "X-Slack-No-Retry"
)

// keptHeaders are stored with the event; the signature never is.
func keptHeaders() []string {
	return []string{HeaderTimestamp, HeaderRetryNum, HeaderRetryReason, "User-Agent", "Content-Type"}
}

// connector is one configured Slack app: its config, name cache and memory of
// recent mentions, shared by the HTTP endpoint and its Socket Mode client.
type connector struct {
	cfg           Config
	resolver      *resolver
	recent        *recentMentions
	lookupTimeout time.Duration
	log           *slog.Logger
	answers       Decider   // threaded replies that may answer questions; nil: approvals are off
	own           reply.Own // the gateway's own replies coming back; nil: not recognised
}

// Handler serves POST /webhooks/slack/:connector for every configured connector.
type Handler struct {
	conns         map[string]*connector
	opening       connectors.Opening[*connector]
	pipeline      *connectors.Pipeline
	log           *slog.Logger
	now           func() time.Time
	httpClient    *http.Client
	lookupTimeout time.Duration
	decider       Decider // approval clicks; nil: approvals are off
	own           reply.Own
}

// Option configures a Handler.
type Option func(*Handler)

// WithHTTPClient sets the client for Web API calls (name lookups, Socket Mode).
func WithHTTPClient(c *http.Client) Option { return func(h *Handler) { h.httpClient = c } }

// WithLookupTimeout bounds the Web API lookups made for one event (DefaultLookupTimeout).
func WithLookupTimeout(d time.Duration) Option { return func(h *Handler) { h.lookupTimeout = d } }

// WithOwnReplies recognises the gateway's own replies when Slack sends them back as
// message events, by the channel and ts recorded when they were sent: they are stored
// ignored with reason reply.OwnReason before any other rule applies.
func WithOwnReplies(own reply.Own) Option { return func(h *Handler) { h.own = own } }

// NewHandler validates the configs and builds the handler.
func NewHandler(cfgs []Config, p *connectors.Pipeline, log *slog.Logger, now func() time.Time, opts ...Option) (*Handler, error) {
	if err := connectors.ValidateConfigs("slack", cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	h := &Handler{
		conns:         make(map[string]*connector, len(cfgs)),
		pipeline:      p,
		log:           log.With("component", "connector_slack"),
		now:           now,
		httpClient:    &http.Client{Timeout: webAPITimeout},
		lookupTimeout: DefaultLookupTimeout,
	}
	for _, o := range opts {
		o(h)
	}
	h.opening = connectors.Opening[*connector]{
		Source: Source, Conns: h.conns, Log: h.log, Now: now,
		Precheck: func(c *connector, _ http.Header) error {
			if len(c.cfg.VerifySecrets()) == 0 {
				return server.NotFound("slack connector %q receives events over Socket Mode", c.cfg.Name)
			}
			return nil
		},
		Secrets:    func(c *connector) [][]byte { return secret.Keys(c.cfg.VerifySecrets()) },
		SecretUsed: p.SecretUsed,
		Verify: func(c *connector, key []byte, hdr http.Header, body []byte, at time.Time) error {
			return verify(hdr, body, string(key), at)
		},
	}
	for _, c := range cfgs {
		c = c.WithDefaults()
		clog := h.log.With("connector", c.Name)
		h.conns[c.Name] = &connector{
			cfg:           c,
			resolver:      newResolver(&c, h.httpClient, now, clog),
			recent:        newRecentMentions(now),
			lookupTimeout: h.lookupTimeout,
			log:           clog,
			answers:       h.decider,
			own:           h.own,
		}
	}
	return h, nil
}

// Mount registers the Events API and interactivity routes on e.
func (h *Handler) Mount(e *echo.Echo) {
	e.POST(RoutePath, h.Serve)
	e.POST(InteractionsPath, h.ServeInteractions)
}

// Serve verifies, stores and routes one Events API request, answering
// url_verification with its challenge. The event is stored before any 2xx; a
// verified body that cannot be read is stored as invalid and answered 202.
func (h *Handler) Serve(c echo.Context) error {
	d, err := h.opening.Open(c)
	if err != nil {
		return noRetry(c, err)
	}
	conn, body := d.Conn, d.Body
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	// A field of the wrong type is no reason to refuse a verified body: build
	// stores it as invalid.
	_ = json.Unmarshal(body, &outer)
	if outer.Type == slackevents.URLVerification && outer.Challenge != "" {
		return c.String(http.StatusOK, outer.Challenge)
	}
	ctx := c.Request().Context()
	parse := connectors.StartParse(ctx)
	parsed, parseErr := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	ev, items := conn.build(ctx, body, &parsed, parseErr, VerifiedBySignature)
	connectors.EndParse(parse, ev.Type, len(items))
	ev.Headers = connectors.KeepHeaders(d.Header, keptHeaders()...)
	ev.ReceivedAt = d.At
	out, err := conn.ingest(ctx, h.pipeline, ev, items)
	if err != nil {
		return err
	}
	return c.JSON(out.HTTPStatus(), out)
}

// Items turns a stored or sample Events API envelope back into items without verifying
// it, for replay and explain. A recently notified mention does not suppress it: a
// replay is deliberate.
func (h *Handler) Items(ctx context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	conn, ok := h.conns[ev.Connector]
	if !ok {
		return nil, fmt.Errorf("no slack connector named %q", ev.Connector)
	}
	fresh := *conn
	fresh.recent = newRecentMentions(h.now)
	via := VerifiedBySignature
	if connectors.Header(ev.Headers, HeaderTimestamp) == "" {
		via = VerifiedBySocketMode // Socket Mode events carry no request timestamp
	}
	parsed, parseErr := slackevents.ParseEvent(json.RawMessage(ev.Body), slackevents.OptionNoVerifyToken())
	built, items := fresh.build(ctx, ev.Body, &parsed, parseErr, via)
	switch built.Status {
	case inbox.EventInvalid:
		return nil, errors.New(built.Error)
	case inbox.EventIgnored:
		return nil, &connectors.NotMapped{Reason: built.Error}
	}
	return items, nil
}

// verify checks the v0 signature and the timestamp window. The window is checked
// against the injected clock first (slack-go's own check reads the wall clock). It
// returns why the request was rejected (a connectors.Reason), nil when it passes:
// slack-go's own error text is never passed on, since its mismatch error carries the
// signature it computed.
func verify(h http.Header, body []byte, secret string, now time.Time) error {
	ts := h.Get(HeaderTimestamp)
	switch {
	case h.Get(HeaderSignature) == "":
		return connectors.ReasonSignatureMissing
	case ts == "":
		return connectors.ReasonTimestampMissing
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return connectors.ReasonTimestampMalformed
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureWindow || d < -SignatureWindow {
		return connectors.ReasonTimestampWindow
	}
	sv, err := slack.NewSecretsVerifier(h, secret)
	switch {
	case errors.Is(err, slack.ErrExpiredTimestamp):
		return connectors.ReasonTimestampWindow // by the wall clock, which slack-go reads
	case err != nil:
		return connectors.ReasonSignatureMismatch // not a v0 signature of the right size
	}
	if _, err := sv.Write(body); err != nil {
		return connectors.ReasonNotVerified
	}
	if sv.Ensure() != nil {
		return connectors.ReasonSignatureMismatch
	}
	return nil
}

// noRetry marks answers Slack's retries cannot change (malformed, too large).
func noRetry(c echo.Context, err error) error {
	var se *server.Error
	if errors.As(err, &se) && (se.Status == http.StatusBadRequest || se.Status == http.StatusRequestEntityTooLarge) {
		c.Response().Header().Set(HeaderNoRetry, "1")
	}
	return err
}

// build turns a verified envelope into the event to store and its items. parsed
// and parseErr are slack-go's reading of body; when it failed, the envelope is
// read minimally so a malformed block does not lose the message.
func (c *connector) build(ctx context.Context, body []byte, parsed *slackevents.EventsAPIEvent, parseErr error, via string) (*inbox.Event, []connectors.Item) {
	ev := &inbox.Event{Source: Source, Connector: c.cfg.Name, Body: withoutToken(body)}
	var env envelope
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || trimmed[0] != '{' {
		ev.Type, ev.Status, ev.Error = "unknown", inbox.EventInvalid, "decode envelope: want a JSON object"
		c.log.WarnContext(ctx, "envelope not decodable", "error", ev.Error)
		return ev, nil
	}
	if err := json.Unmarshal(body, &env); err != nil {
		ev.Type, ev.Status, ev.Error = "unknown", inbox.EventInvalid, "decode envelope: "+jsonProblem(err)
		c.log.WarnContext(ctx, "envelope not decodable", "error", ev.Error)
		return ev, nil
	}
	ev.DeliveryID, ev.Type = env.EventID, env.Type
	switch env.Type {
	case slackevents.CallbackEvent:
		ev.Type = cmp.Or(env.innerType(), env.Type)
		var m message
		var mapped bool
		if parseErr == nil && parsed != nil {
			m, mapped = fromParsed(parsed.InnerEvent.Data)
		} else {
			var err error
			m, mapped, err = fromRaw(env.Event)
			if err != nil {
				ev.Status, ev.Error = inbox.EventInvalid, "decode event: "+jsonProblem(err)
				c.log.WarnContext(ctx, "event not decodable", "event_id", env.EventID, "error", ev.Error)
				return ev, nil
			}
			if mapped {
				c.log.WarnContext(ctx, "slack-go could not parse the event; read its basic fields only",
					"event_id", env.EventID, "event_type", ev.Type, "error", errString(parseErr))
			}
		}
		if !mapped {
			ev.Status, ev.Error = inbox.EventIgnored, fmt.Sprintf("event type %q is not mapped", ev.Type)
			return ev, nil
		}
		if c.markedOwn(&env, &m) || c.ownReply(ctx, &m) {
			ev.Status, ev.Error = inbox.EventIgnored, reply.OwnReason
			return ev, nil
		}
		mp := mapping{c: c, team: env.TeamID, botUser: cmp.Or(c.cfg.BotUserID, env.botUser()), via: via, delivery: env.EventID}
		return ev, []connectors.Item{mp.item(ctx, &m)}
	case slackevents.AppRateLimited:
		ev.Status, ev.Error = inbox.EventIgnored, "Slack is rate-limiting this app's events; some were not sent"
		c.log.WarnContext(ctx, "slack rate-limited the app's events", "team", env.TeamID, "api_app_id", env.APIAppID)
	default:
		ev.Status, ev.Error = inbox.EventIgnored, fmt.Sprintf("envelope type %q is not mapped", env.Type)
	}
	return ev, nil
}

// ownReply reports whether m is one of the gateway's replies. A failed lookup is
// logged and the other rules decide (the bot's own messages are skipped by them too).
func (c *connector) ownReply(ctx context.Context, m *message) bool {
	if c.own == nil || m.channel == "" || m.ts == "" {
		return false
	}
	own, err := c.own.OwnReply(ctx, Source, c.cfg.Name, ownPlatformID(m.channel, m.ts))
	if err != nil {
		c.log.WarnContext(ctx, "own reply lookup failed; applying the other rules", "channel", m.channel, "ts", m.ts, "error", err.Error())
		return false
	}
	return own
}

// markedOwn reports whether the inner event is a message this app posted carrying
// a reply marker: recognised even before the outbox has recorded the message's ts
// (the event can overtake the recording). The marker alone proves nothing — any app
// can set metadata — so the poster must be this app (app_id) or its bot user.
func (c *connector) markedOwn(env *envelope, m *message) bool {
	if c.own == nil {
		return false
	}
	var in struct {
		User       string `json:"user"`
		AppID      string `json:"app_id"`
		BotProfile *struct {
			AppID string `json:"app_id"`
		} `json:"bot_profile"`
		Metadata *struct {
			EventType string `json:"event_type"`
		} `json:"metadata"`
	}
	if json.Unmarshal(env.Event, &in) != nil || in.Metadata == nil || in.Metadata.EventType != ReplyEventType {
		return false
	}
	app := in.AppID
	if app == "" && in.BotProfile != nil {
		app = in.BotProfile.AppID
	}
	if env.APIAppID != "" && app == env.APIAppID {
		return true
	}
	bot := cmp.Or(c.cfg.BotUserID, env.botUser())
	return bot != "" && m.user == bot
}

// ingest stores the event and, once committed, remembers which event type
// notified each message.
func (c *connector) ingest(ctx context.Context, p *connectors.Pipeline, ev *inbox.Event, items []connectors.Item) (connectors.Outcome, error) {
	out, err := p.Ingest(ctx, ev, items)
	if err != nil {
		return out, err
	}
	// Once stored: a reply taken as an answer is never lost to a failed commit.
	c.answerReplies(ctx, items)
	for _, it := range items {
		if it.Skip == "" && it.DedupeKey != "" {
			if t, _ := it.Metadata["slack_event"].(string); t != "" {
				c.recent.remember(it.DedupeKey, t, it.Kind)
			}
		}
	}
	if ev.Headers[HeaderRetryNum] != "" {
		c.log.Debug("slack retry", "event_id", ev.DeliveryID, "retry_num", ev.Headers[HeaderRetryNum],
			"retry_reason", ev.Headers[HeaderRetryReason], "duplicate", out.Duplicate)
	}
	return out, nil
}

// jsonProblem names what did not fit without echoing payload content.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "malformed JSON"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	return "unexpected shape"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// withoutToken drops the Events API's legacy verification token from a stored
// envelope: it is a credential (signatures replaced it), and the admin API and
// replays would hand it out. Bodies without one are kept byte for byte.
func withoutToken(body []byte) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	if _, ok := fields["token"]; !ok {
		return body
	}
	delete(fields, "token")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // message text stays as Slack sent it
	if enc.Encode(fields) != nil {
		return body
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
