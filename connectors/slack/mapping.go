package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// Provenance of items, by how the event arrived.
const (
	VerifiedBySignature  = "slack-v0"
	VerifiedBySocketMode = "slack-socket-mode"
)

// messageLen bounds the text handed to an agent as a message.
const messageLen = 4000

// message is what the mapping reads from an app_mention or message event, taken
// from slack-go's typed events or, when those do not parse, from the raw JSON.
type message struct {
	eventType   string // app_mention or message
	subtype     string
	user        string
	botID       string
	botName     string
	text        string
	ts          string
	threadTS    string
	channel     string
	channelType string
	files       []string
}

// envelope is the outer Events API body, decoded without slack-go so ids and the
// raw inner event survive a body slack-go rejects.
type envelope struct {
	Type           string          `json:"type"`
	TeamID         string          `json:"team_id"`
	APIAppID       string          `json:"api_app_id"`
	EventID        string          `json:"event_id"`
	Challenge      string          `json:"challenge"`
	Event          json.RawMessage `json:"event"`
	Authorizations []struct {
		UserID string `json:"user_id"`
		IsBot  bool   `json:"is_bot"`
	} `json:"authorizations"`
}

// innerType reads event.type without trusting the rest of the inner event.
func (e *envelope) innerType() string {
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(e.Event, &t)
	return t.Type
}

// botUser is the bot user the installation acts as, for apps that did not
// configure bot_user_id.
func (e *envelope) botUser() string {
	for _, a := range e.Authorizations {
		if a.IsBot && a.UserID != "" {
			return a.UserID
		}
	}
	return ""
}

// fromParsed extracts the message of a typed inner event; ok is false for
// event types the connector does not map.
func fromParsed(inner any) (m message, ok bool) {
	switch e := inner.(type) {
	case *slackevents.AppMentionEvent:
		m = message{eventType: "app_mention", user: e.User, botID: e.BotID, text: e.Text,
			ts: e.TimeStamp, threadTS: e.ThreadTimeStamp, channel: e.Channel}
		for _, f := range e.Files {
			m.files = append(m.files, firstNonEmpty(f.Name, f.Title))
		}
		return m, true
	case *slackevents.MessageEvent:
		m = message{eventType: "message", subtype: e.SubType, user: e.User, botID: e.BotID,
			botName: e.Username, text: e.Text, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp,
			channel: e.Channel, channelType: e.ChannelType}
		if e.Message != nil && e.SubType != "message_changed" {
			if e.Message.BotProfile != nil && m.botName == "" {
				m.botName = e.Message.BotProfile.Name
			}
			for _, f := range e.Message.Files {
				m.files = append(m.files, firstNonEmpty(f.Name, f.Title))
			}
		}
		return m, true
	}
	return message{}, false
}

// rawInner is the subset of an inner event read when slack-go rejects it (a
// malformed block must not lose a message).
type rawInner struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Username    string `json:"username"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	BotProfile  *struct {
		Name string `json:"name"`
	} `json:"bot_profile"`
	Files []struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"files"`
}

// fromRaw decodes the inner event minimally; ok is false for unmapped types.
func fromRaw(raw json.RawMessage) (m message, ok bool, err error) {
	var in rawInner
	if err := json.Unmarshal(raw, &in); err != nil {
		return message{}, false, err
	}
	if !slices.Contains(mappedInner(), in.Type) {
		return message{}, false, nil
	}
	m = message{eventType: in.Type, subtype: in.Subtype, user: in.User, botID: in.BotID,
		botName: in.Username, text: in.Text, ts: in.TS, threadTS: in.ThreadTS,
		channel: in.Channel, channelType: in.ChannelType}
	if in.BotProfile != nil && m.botName == "" {
		m.botName = in.BotProfile.Name
	}
	for _, f := range in.Files {
		m.files = append(m.files, firstNonEmpty(f.Name, f.Title))
	}
	return m, true, nil
}

// channelTypeOf derives the type from the id when the event does not say
// (app_mention has no channel_type): D… is a DM, C… a channel; G… is ambiguous.
func channelTypeOf(m *message) string {
	if m.channelType != "" {
		return m.channelType
	}
	switch {
	case strings.HasPrefix(m.channel, "D"):
		return "im"
	case strings.HasPrefix(m.channel, "C"):
		return "channel"
	}
	return ""
}

// mapping turns one message into an item for one connector.
type mapping struct {
	c        *connector
	team     string
	botUser  string
	via      string // VerifiedBy…
	delivery string
}

func (mp *mapping) keys(m *message) (dedupe, coalesce string) {
	base := mp.team + ":" + m.channel
	coalesce = base
	if m.threadTS != "" {
		coalesce = base + ":" + m.threadTS
	}
	return base + ":" + m.ts, coalesce
}

// skipReason keeps the bot's own words, other bots and housekeeping subtypes out
// of routing.
func (mp *mapping) skipReason(m *message) string {
	cfg := &mp.c.cfg
	if mp.botUser != "" && strings.EqualFold(m.user, mp.botUser) {
		return "written by the configured bot " + mp.botUser
	}
	isBot := m.botID != "" || m.subtype == "bot_message"
	if isBot && cfg.ignoredSubtype("bot_message") && !cfg.allowedBot(m.botID, m.user, m.botName) {
		return fmt.Sprintf("written by bot %s, not in allowed_bots", firstNonEmpty(m.botName, m.botID, m.user))
	}
	if m.subtype != "bot_message" && cfg.ignoredSubtype(m.subtype) {
		return fmt.Sprintf("message subtype %q is ignored", m.subtype)
	}
	if m.channel == "" || m.ts == "" {
		return "event has no channel or ts"
	}
	return ""
}

// defaultKind classifies before renames: a DM stays a DM (app_mention is not
// sent for DMs), any other message addressed to the bot is a mention, so the
// app_mention and message events of one message share kind and dedupeKey.
func (mp *mapping) defaultKind(m *message, channelType string) string {
	switch {
	case channelType == "im":
		return KindDM
	case m.eventType == "app_mention" || mentions(m.text, mp.botUser):
		return KindMention
	case channelType == "mpim":
		return KindGroupDM
	}
	return KindMessage
}

func (mp *mapping) item(ctx context.Context, m *message) connectors.Item {
	cfg := &mp.c.cfg
	dedupe, coalesce := mp.keys(m)
	channelType := channelTypeOf(m)
	isBot := m.botID != "" || m.subtype == "bot_message"
	author := firstNonEmpty(m.user, m.botID)
	it := connectors.Item{
		DedupeKey:   dedupe,
		CoalesceKey: coalesce,
		SourceID:    m.ts,
		Metadata: map[string]any{
			connectors.MetaVerifiedBy:  mp.via,
			connectors.MetaAuthor:      author,
			connectors.MetaAuthorIsBot: isBot,
			"slack_event":              m.eventType,
		},
		Fields: connectors.Fields{
			Source: Source, Connector: cfg.Name, Team: mp.team, Channel: m.channel,
			ChannelType: channelType, User: m.user, ThreadTS: m.threadTS, Author: author,
		},
	}
	if mp.delivery != "" {
		it.Metadata["delivery_id"] = mp.delivery
	}
	it.OccurredAt = tsTime(m.ts)
	if m.channel != "" && m.ts != "" {
		it.Metadata[reply.MetadataKey] = mp.replyTo(m, channelType)
		// The thread (a root message is its own) and the channel.
		it.WatchResources = []string{m.channel + "/" + firstNonEmpty(m.threadTS, m.ts), m.channel}
	}
	if it.Skip = mp.skipReason(m); it.Skip != "" {
		kind := mp.defaultKind(m, channelType)
		it.Kind, it.Priority, it.Fields.Kind = cfg.kind(kind), cfg.priority(kind), cfg.kind(kind)
		return it
	}

	r := mp.c.resolver
	ctx, cancel := context.WithTimeout(ctx, mp.c.lookupTimeout)
	defer cancel()
	var channelName string
	if channelType != "im" && channelType != "mpim" && r.enabled() {
		var resolvedType string
		channelName, resolvedType = r.channel(ctx, m.channel)
		if channelType == "" {
			channelType = resolvedType
		}
	}
	userName := r.user(ctx, m.user)
	users, channels := markupIDs(m.text, maxMarkupLookups)
	names := map[string]string{}
	for _, id := range users {
		names["@"+id] = r.user(ctx, id)
	}
	for _, id := range channels {
		names["#"+id], _ = r.channel(ctx, id)
	}
	text := renderText(m.text, namer{
		user:    func(id string) string { return names["@"+id] },
		channel: func(id string) string { return names["#"+id] },
	})
	url := mp.url(ctx, m)

	kind := mp.defaultKind(m, channelType)
	it.Kind, it.Priority = cfg.kind(kind), cfg.priority(kind)
	it.Fields.Kind, it.Fields.ChannelType = it.Kind, channelType
	if other := mp.c.recent.other(dedupe, m.eventType, it.Kind); other != "" {
		it.Skip = fmt.Sprintf("already notified by the %s event for this message", other)
		return it
	}

	who := firstNonEmpty(userName, m.user, m.botName, m.botID)
	it.Summary = fmt.Sprintf("%s %s: %s", who, where(channelType, firstNonEmpty(channelName, m.channel)),
		connectors.Truncate(oneLine(firstNonEmpty(text, filesText(m.files), "(no text)")), connectors.ExcerptLen))

	attrs := inbox.Attributes{}.Set("channel", m.channel)
	if m.user != "" {
		attrs = attrs.Set("user", m.user)
	}
	attrs = attrs.Set("ts", m.ts)
	if m.threadTS != "" {
		attrs = attrs.Set("thread_ts", m.threadTS)
	}
	if url != "" {
		attrs = attrs.Set("url", url)
	}
	it.Attributes = attrs

	text = connectors.Truncate(strings.TrimSpace(text), messageLen)
	it.Message = &connectors.Message{Name: who, From: Source, Text: firstNonEmpty(text, filesText(m.files))}
	payload := map[string]any{
		"event": m.eventType, "team": mp.team, "channel": m.channel, "channel_type": channelType,
		"user": m.user, "text": text, "ts": m.ts,
	}
	for k, v := range map[string]string{"subtype": m.subtype, "thread_ts": m.threadTS, "url": url,
		"channel_name": channelName, "user_name": userName, "bot_id": m.botID} {
		if v != "" {
			payload[k] = v
		}
	}
	if len(m.files) > 0 {
		payload["files"] = m.files
	}
	if b, err := json.Marshal(payload); err == nil {
		it.Payload = b
	}
	return it
}

// replyTo is where an answer to m goes: its thread when it is in one; under m itself
// in a channel (an answer threads, it does not add to the channel's chatter); at the
// top level of a direct or group direct message (a conversation with the agent,
// answered like one).
func (mp *mapping) replyTo(m *message, channelType string) reply.To {
	thread := m.threadTS
	if thread == "" && channelType != "im" && channelType != "mpim" {
		thread = m.ts
	}
	return reply.NewTo(Source, mp.c.cfg.Name, Place{Team: mp.team, Channel: m.channel, ThreadTS: thread})
}

// tsTime is the time a Slack ts ("1712345678.000100": seconds and microseconds) names;
// zero when it is not one.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 || len(frac) > 9 {
		return time.Time{}
	}
	var ns int64
	if frac != "" {
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return time.Time{}
		}
		ns = f * int64(math.Pow10(9-len(frac)))
	}
	return time.Unix(s, ns).UTC()
}

// where names the conversation for a summary.
func where(channelType, channel string) string {
	switch channelType {
	case "im":
		return "in a direct message"
	case "mpim":
		return "in a group direct message"
	}
	return "in #" + channel
}

func filesText(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return "[file: " + strings.Join(files, ", ") + "]"
}

// url is the message's permalink when the workspace URL is known (from auth.test
// with the bot token), else a web client link to the channel.
func (mp *mapping) url(ctx context.Context, m *message) string {
	if mp.team == "" || m.channel == "" {
		return ""
	}
	if ws := mp.c.resolver.workspaceURL(ctx, mp.team); ws != "" && m.ts != "" {
		return permalink(ws, m.channel, m.ts, m.threadTS)
	}
	return "https://app.slack.com/client/" + mp.team + "/" + m.channel
}

// permalink is a message's link in the workspace at ws ("https://acme.slack.com/").
func permalink(ws, channel, ts, threadTS string) string {
	u := strings.TrimSuffix(ws, "/") + "/archives/" + channel + "/p" + strings.Replace(ts, ".", "", 1)
	if threadTS != "" && threadTS != ts {
		u += "?thread_ts=" + threadTS + "&cid=" + channel
	}
	return u
}
