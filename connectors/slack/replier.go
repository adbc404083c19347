package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/reply"
)

// Replies carry Slack message metadata of this event type, with the reply's id under
// ReplyIDKey in its payload: the marker Find looks for after a crash, since
// chat.postMessage has no idempotency key.
const (
	ReplyEventType = "signalgate_reply"
	ReplyIDKey     = "reply_id"
)

// MaxReplyChars is Slack's limit on a message's text (it truncates longer ones),
// counted on the converted mrkdwn.
const MaxReplyChars = 40000

const (
	// findSkew widens Find's window before the reply was created: Slack's clock and
	// ours may differ.
	findSkew = 10 * time.Minute
	// findPage and findMaxPages bound one Find: a conversation busier than that since
	// the reply was created is an error (retried later), never a guess that posts twice.
	findPage     = 200
	findMaxPages = 25
)

// transientErrors are Slack error codes a later attempt may get past; every other
// error code of an answered call (channel_not_found, not_in_channel, is_archived,
// invalid_auth, missing_scope, msg_too_long…) is permanent.
func transientErrors() []string {
	return []string{"ratelimited", "rate_limited", "service_unavailable", "fatal_error", "internal_error",
		"request_timeout", "team_added_to_org"}
}

// Replier posts agents' replies with each connector's bot token (reply.Sender), for
// Events API and Socket Mode connectors alike.
type Replier struct {
	conns map[string]*replyConn
}

type replyConn struct {
	cfg      Config
	api      *slack.Client // nil without a bot_token
	resolver *resolver     // the workspace URL for links
}

var _ reply.Sender = (*Replier)(nil)

// ReplierOption configures a Replier.
type ReplierOption func(*replierOptions)

type replierOptions struct{ hc *http.Client }

// WithReplyHTTPClient sets the client of the Replier's Web API calls.
func WithReplyHTTPClient(c *http.Client) ReplierOption {
	return func(o *replierOptions) { o.hc = c }
}

// NewReplier validates the configs and builds the sender of replies to Slack.
func NewReplier(cfgs []Config, log *slog.Logger, now func() time.Time, opts ...ReplierOption) (*Replier, error) {
	if err := connectors.ValidateConfigs("slack", cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	o := replierOptions{hc: &http.Client{Timeout: webAPITimeout}}
	for _, opt := range opts {
		opt(&o)
	}
	r := &Replier{conns: make(map[string]*replyConn, len(cfgs))}
	for _, c := range cfgs {
		c = c.WithDefaults()
		clog := log.With("component", "slack_replies", "connector", c.Name)
		res := newResolver(&c, o.hc, now, clog)
		r.conns[c.Name] = &replyConn{cfg: c, api: res.api, resolver: res}
	}
	return r, nil
}

// conn returns the connector a reply goes through, refusing what can never be posted.
func (r *Replier) conn(to reply.To) (*replyConn, Place, error) {
	if to.Source != Source {
		return nil, Place{}, fmt.Errorf("replyTo.source %q is not slack: %w", to.Source, reply.ErrUnknownPlace)
	}
	c, ok := r.conns[to.Connector]
	if !ok {
		return nil, Place{}, fmt.Errorf("no slack connector named %q: %w", to.Connector, reply.ErrUnknownPlace)
	}
	if c.api == nil {
		return nil, Place{}, fmt.Errorf("slack connector %q has no bot_token (connectors.slack[].bot_token): %w", to.Connector, reply.ErrNoCredentials)
	}
	p, err := reply.PlaceOf[Place](to)
	if err != nil {
		return nil, Place{}, fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	if !isSlackID(p.Channel) {
		return nil, Place{}, fmt.Errorf("replyTo.channel %q is not a Slack conversation id (like C0123ABCD or D0123ABCD): %w", p.Channel, reply.ErrUnknownPlace)
	}
	if p.ThreadTS != "" && !isSlackTS(p.ThreadTS) {
		return nil, Place{}, fmt.Errorf("replyTo.threadTs %q is not a Slack message ts (like 1700000000.000100): %w", p.ThreadTS, reply.ErrUnknownPlace)
	}
	return c, p, nil
}

// isSlackTS reports a message timestamp: seconds, a dot, microseconds.
func isSlackTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && len(sec) > 0 && len(sec) <= 12 && len(frac) == 6 && digits(sec) && digits(frac)
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Check refuses a reply Slack could never take: see reply.Sender.
func (r *Replier) Check(to reply.To, text string) error {
	c, _, err := r.conn(to)
	if err != nil {
		return err
	}
	return tooLong(messageText(text, c.cfg.AllowMentions))
}

// messageText is a reply's text as posted: Slack mrkdwn, with any marker text in it
// neutralised (after the conversion, which could join one from pieces). Slack's marker
// is the message metadata, which text cannot set; neutralising keeps a quoted marker
// from looking like the gateway's wherever the text is read or copied.
func messageText(text string, allowMentions bool) string {
	return reply.NeutralizeMarkers(markdownToMrkdwn(text, allowMentions))
}

func tooLong(text string) error {
	if n := utf8.RuneCountInString(text); n > MaxReplyChars {
		return fmt.Errorf("reply is %d characters as Slack mrkdwn, over Slack's %d: %w", n, MaxReplyChars, reply.ErrTooLong)
	}
	return nil
}

// Send posts rp into its DM or thread, with its marker in the message metadata.
func (r *Replier) Send(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, err := r.conn(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	text := messageText(rp.Text, c.cfg.AllowMentions)
	if err := tooLong(text); err != nil {
		return reply.Sent{}, false, err
	}
	opts := []slack.MsgOption{
		slack.MsgOptionText(text, false), // escaped by the conversion, not again
		slack.MsgOptionLinkNames(false),  // "@channel" in text stays text
		slack.MsgOptionMetadata(slack.SlackMetadata{EventType: ReplyEventType,
			EventPayload: map[string]any{ReplyIDKey: rp.ID}}),
	}
	if p.ThreadTS != "" {
		opts = append(opts, slack.MsgOptionTS(p.ThreadTS))
	}
	ch, ts, err := c.api.PostMessageContext(ctx, p.Channel, opts...)
	if err != nil {
		retry, err := classify("chat.postMessage", err)
		return reply.Sent{}, retry, err
	}
	if ch == "" {
		ch = p.Channel
	}
	return c.sent(ctx, p, ch, ts), false, nil
}

// sent is where a posted message is: "<channel>/<ts>" (what reply.Own matches) and its
// link when the workspace URL is known.
func (c *replyConn) sent(ctx context.Context, to Place, channel, ts string) reply.Sent {
	s := reply.Sent{PlatformID: ownPlatformID(channel, ts)}
	if ws := c.resolver.workspaceURL(ctx, to.Team); ws != "" {
		s.URL = permalink(ws, channel, ts, to.ThreadTS)
	}
	return s
}

// Find looks for rp's marker among the thread's replies (conversations.replies) or,
// for a top-level reply, the conversation's messages (conversations.history) since rp
// was created.
func (r *Replier) Find(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, err := r.conn(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	// Only our bot can have posted our marker: another app in the conversation could post
	// the same metadata with a guessed reply id and so stop the reply from being sent.
	bot, ok := c.resolver.botID(ctx)
	if !ok {
		return reply.Sent{}, false, errors.New("auth.test: the bot's id is unknown, so its replies cannot be told from others'")
	}
	var oldest string
	if !rp.CreatedAt.IsZero() {
		from := rp.CreatedAt.Add(-findSkew)
		oldest = fmt.Sprintf("%d.%06d", from.Unix(), from.Nanosecond()/1000)
	}
	cursor := ""
	for range findMaxPages {
		var msgs []slack.Message
		var next string
		if p.ThreadTS != "" {
			msgs, _, next, err = c.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: p.Channel, Timestamp: p.ThreadTS, Cursor: cursor, Limit: findPage,
				Oldest: oldest, Inclusive: true, IncludeAllMetadata: true,
			})
			if err != nil {
				_, err = classify("conversations.replies", err)
				return reply.Sent{}, false, err
			}
		} else {
			h, herr := c.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: p.Channel, Cursor: cursor, Limit: findPage,
				Oldest: oldest, Inclusive: true, IncludeAllMetadata: true,
			})
			if herr != nil {
				_, err = classify("conversations.history", herr)
				return reply.Sent{}, false, err
			}
			msgs, next = h.Messages, h.ResponseMetaData.NextCursor
		}
		if i := slices.IndexFunc(msgs, func(m slack.Message) bool { return m.BotID == bot && carries(m, rp.ID) }); i >= 0 {
			return c.sent(ctx, p, p.Channel, msgs[i].Timestamp), true, nil
		}
		if next == "" {
			return reply.Sent{}, false, nil
		}
		cursor = next
	}
	return reply.Sent{}, false, fmt.Errorf("slack conversation %s has over %d messages since the reply was created; not searched further", p.Channel, findPage*findMaxPages)
}

// carries reports whether m is marked as the reply with id.
func carries(m slack.Message, id string) bool {
	if m.Metadata.EventType != ReplyEventType {
		return false
	}
	v, _ := m.Metadata.EventPayload[ReplyIDKey].(string)
	return v == id
}

// classify tells a permanent failure from one a later attempt may get past, and
// carries a rate limit's wait.
func classify(method string, err error) (retry bool, _ error) {
	wrapped := fmt.Errorf("%s: %w", method, err)
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return true, &reply.RetryAfter{Wait: rl.RetryAfter, Err: wrapped}
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Retryable(), wrapped
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return slices.Contains(transientErrors(), se.Err), wrapped
	}
	// Timeouts, refused connections, a malformed Retry-After: the network, not the reply.
	return true, wrapped
}

// ownPlatformID is how a Slack message is named to reply.Own.
func ownPlatformID(channel, ts string) string { return channel + "/" + ts }
