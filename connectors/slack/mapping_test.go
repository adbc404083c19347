package slack

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

type mappingCase struct {
	name  string
	event map[string]any
	// expectations; skip set means stored, ignored, not routed
	kind, summary, resolvedSummary string
	priority                       inbox.Priority
	dedupe, coalesce               string
	channelType                    string
	threadTS                       string
	skip                           string
}

func mappingCases() []mappingCase {
	const ts, parent = "1700000000.000100", "1700000000.000050"
	return []mappingCase{
		{
			name:  "app_mention",
			event: appMention("C0001", ts, "<@U0BOT> can you look at the deploy?"),
			kind:  KindMention, priority: inbox.PriorityHigh,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001", channelType: "channel",
			summary:         "U061F7AUR in #C0001: @U0BOT can you look at the deploy?",
			resolvedSummary: "alice in #general: @Signal Bot can you look at the deploy?",
		},
		{
			name:  "channel message mentioning the bot",
			event: messageEvent("C0001", "channel", ts, "ping <@U0BOT|signalbot>, the build is red"),
			kind:  KindMention, priority: inbox.PriorityHigh,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001", channelType: "channel",
			summary:         "U061F7AUR in #C0001: ping @signalbot, the build is red",
			resolvedSummary: "alice in #general: ping @signalbot, the build is red",
		},
		{
			name:  "direct message",
			event: messageEvent("D024BE91L", "im", "1355517523.000005", "Hello hello can you hear me?"),
			kind:  KindDM, priority: inbox.PriorityHigh,
			dedupe: "T0001:D024BE91L:1355517523.000005", coalesce: "T0001:D024BE91L", channelType: "im",
			summary:         "U061F7AUR in a direct message: Hello hello can you hear me?",
			resolvedSummary: "alice in a direct message: Hello hello can you hear me?",
		},
		{
			name:  "group direct message",
			event: messageEvent("G024BE91L", "mpim", ts, "who is on call?"),
			kind:  KindGroupDM, priority: inbox.PriorityHigh,
			dedupe: "T0001:G024BE91L:" + ts, coalesce: "T0001:G024BE91L", channelType: "mpim",
			summary:         "U061F7AUR in a group direct message: who is on call?",
			resolvedSummary: "alice in a group direct message: who is on call?",
		},
		{
			name:  "plain channel message",
			event: messageEvent("C0001", "channel", ts, "lunch?"),
			kind:  KindMessage, priority: inbox.PriorityLow,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001", channelType: "channel",
			summary:         "U061F7AUR in #C0001: lunch?",
			resolvedSummary: "alice in #general: lunch?",
		},
		{
			name:  "private channel message",
			event: messageEvent("G0002", "group", ts, "plans"),
			kind:  KindMessage, priority: inbox.PriorityLow,
			dedupe: "T0001:G0002:" + ts, coalesce: "T0001:G0002", channelType: "group",
			summary:         "U061F7AUR in #G0002: plans",
			resolvedSummary: "alice in #secret-plans: plans",
		},
		{
			name:  "thread reply",
			event: with(messageEvent("C0001", "channel", ts, "done, see <#C0002|ops>"), "thread_ts", parent, "parent_user_id", "U0BOB"),
			kind:  KindMessage, priority: inbox.PriorityLow,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001:" + parent, channelType: "channel", threadTS: parent,
			summary:         "U061F7AUR in #C0001: done, see #ops",
			resolvedSummary: "alice in #general: done, see #ops",
		},
		{
			name:  "mention in a thread",
			event: with(appMention("C0001", ts, "<@U0BOT> summarise <#C0002> for <@U0BOB>"), "thread_ts", parent),
			kind:  KindMention, priority: inbox.PriorityHigh,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001:" + parent, channelType: "channel", threadTS: parent,
			summary:         "U061F7AUR in #C0001: @U0BOT summarise #C0002 for @U0BOB",
			resolvedSummary: "alice in #general: @Signal Bot summarise #ops for @bob",
		},
		{
			name: "the bot's own message",
			event: with(messageEvent("C0001", "channel", ts, "on it"), "user", testBot, "bot_id", "B0BOT",
				"app_id", "A0KRD7HC3", "bot_profile", map[string]any{"id": "B0BOT", "name": "signalbot", "app_id": "A0KRD7HC3"}),
			kind: KindMessage, priority: inbox.PriorityLow, dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001",
			channelType: "channel", skip: "written by the configured bot U0BOT",
		},
		{
			name:  "the bot's own reply in a DM",
			event: with(messageEvent("D024BE91L", "im", ts, "hello"), "user", testBot, "bot_id", "B0BOT"),
			kind:  KindDM, priority: inbox.PriorityHigh, dedupe: "T0001:D024BE91L:" + ts, coalesce: "T0001:D024BE91L",
			channelType: "im", skip: "written by the configured bot U0BOT",
		},
		{
			// https://api.slack.com/events/message/bot_message
			name: "another bot's message",
			event: map[string]any{"type": "message", "subtype": "bot_message", "ts": ts, "text": "Pushing is the answer",
				"bot_id": "BB12033", "username": "github", "icons": map[string]any{}, "channel": "C0001", "channel_type": "channel", "event_ts": ts},
			kind: KindMessage, priority: inbox.PriorityLow, dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001",
			channelType: "channel", skip: "written by bot github, not in allowed_bots",
		},
		{
			// https://api.slack.com/events/message/message_changed
			name: "message_changed",
			event: map[string]any{"type": "message", "subtype": "message_changed", "hidden": true, "channel": "C0001",
				"channel_type": "channel", "ts": "1358878755.000001", "event_ts": "1358878755.000001",
				"message": map[string]any{"type": "message", "user": testUser, "text": "Hello, world!", "ts": "1355517523.000005",
					"edited": map[string]any{"user": testUser, "ts": "1358878755.000001"}}},
			kind: KindMessage, priority: inbox.PriorityLow, dedupe: "T0001:C0001:1358878755.000001", coalesce: "T0001:C0001",
			channelType: "channel", skip: `message subtype "message_changed" is ignored`,
		},
		{
			// https://api.slack.com/events/message/channel_join
			name: "channel_join",
			event: map[string]any{"type": "message", "subtype": "channel_join", "ts": ts, "user": testUser,
				"text": "<@U061F7AUR> has joined the channel", "channel": "C0001", "channel_type": "channel", "event_ts": ts},
			kind: KindMessage, priority: inbox.PriorityLow, dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001",
			channelType: "channel", skip: `message subtype "channel_join" is ignored`,
		},
		{
			name:  "markup rendered to plain text",
			event: messageEvent("C0001", "channel", ts, "<!here> read <https://example.com/a?b=1&amp;c=2|the doc> &amp; <mailto:ops@example.com|ops@example.com>, x &lt; y"),
			kind:  KindMessage, priority: inbox.PriorityLow,
			dedupe: "T0001:C0001:" + ts, coalesce: "T0001:C0001", channelType: "channel",
			summary:         "U061F7AUR in #C0001: @here read the doc (https://example.com/a?b=1&c=2) & ops@example.com, x < y",
			resolvedSummary: "alice in #general: @here read the doc (https://example.com/a?b=1&c=2) & ops@example.com, x < y",
		},
	}
}

func TestMapping(t *testing.T) {
	for _, resolved := range []bool{false, true} {
		for i, tc := range mappingCases() {
			name := tc.name
			if resolved {
				name += " (names resolved)"
			}
			t.Run(name, func(t *testing.T) {
				cfg := testConfig()
				if resolved {
					cfg.BotToken, cfg.APIURL = testBotToken, newFakeSlack(t).APIURL()
				}
				h := newHarness(t, cfg, harnessOpts{})
				rec := h.post(callback(t, "Ev"+string(rune('A'+i)), tc.event))
				require.Less(t, rec.Code, 300, rec.Body.String())
				call := h.lastCall()
				if tc.skip != "" {
					assert.Equal(t, http.StatusAccepted, rec.Code)
					assert.Equal(t, inbox.EventIgnored, call.Event.Status)
					assert.Equal(t, tc.skip, call.Event.Error)
					assert.Empty(t, call.Notifications)
					return
				}
				require.Equal(t, http.StatusOK, rec.Code)
				require.Len(t, call.Notifications, 1)
				n := call.Notifications[0]
				assert.Equal(t, tc.kind, n.Kind)
				assert.Equal(t, tc.priority, n.Priority)
				assert.Equal(t, "slack", n.Source)
				assert.Equal(t, tc.dedupe, n.DedupeKey)
				assert.Equal(t, tc.coalesce, n.CoalesceKey)
				want := tc.summary
				if resolved {
					want = tc.resolvedSummary
				}
				assert.Equal(t, want, n.Summary)
				assert.Equal(t, inbox.ThreadKey{Agent: "support", Resource: "slack:T0001", Thread: tc.event["channel"].(string)}, n.Thread)

				wantKeys := []string{"channel", "user", "ts"}
				if tc.threadTS != "" {
					wantKeys = append(wantKeys, "thread_ts")
					assert.Equal(t, tc.threadTS, n.Attributes.String("thread_ts"))
				}
				assert.Equal(t, append(wantKeys, "url"), attrKeys(n.Attributes))
				assert.Equal(t, tc.event["channel"], n.Attributes.String("channel"))
				assert.Equal(t, testUser, n.Attributes.String("user"))
				assert.Equal(t, tc.event["ts"], n.Attributes.String("ts"))

				assert.Equal(t, VerifiedBySignature, n.Metadata[connectors.MetaVerifiedBy])
				assert.Equal(t, testUser, n.Metadata[connectors.MetaAuthor])
				assert.Equal(t, false, n.Metadata[connectors.MetaAuthorIsBot])
			})
		}
	}
}

func TestFields(t *testing.T) {
	routes := []connectors.RouteConfig{{
		Name:   "thread",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"slack"}},
		Thread: connectors.ThreadConfig{Agent: "support", Resource: "{{.Connector}}/{{.Team}}/{{.ChannelType}}", Thread: "{{.Channel}}/{{.ThreadTS}}/{{.User}}/{{.Author}}/{{.Kind}}"},
	}}
	h := newHarness(t, testConfig(), harnessOpts{routes: routes})
	body := callback(t, "Ev01", with(messageEvent("C0001", "channel", "1700000000.000100", "hi"), "thread_ts", "1700000000.000050"))
	require.Equal(t, http.StatusOK, h.post(body).Code)
	n := h.lastCall().Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "support", Resource: "acme/T0001/channel",
		Thread: "C0001/1700000000.000050/U061F7AUR/U061F7AUR/message"}, n.Thread)
}

func TestPayloadAndURL(t *testing.T) {
	t.Run("without a bot token: a link to the channel", func(t *testing.T) {
		h := newHarness(t, testConfig(), harnessOpts{})
		require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?"))).Code)
		n := h.lastCall().Notifications[0]
		assert.Equal(t, "https://app.slack.com/client/T0001/C0001", n.Attributes.String("url"))
		var p map[string]any
		require.NoError(t, json.Unmarshal(n.Payload, &p))
		assert.Equal(t, map[string]any{"event": "message", "team": "T0001", "channel": "C0001", "channel_type": "channel",
			"user": testUser, "text": "lunch?", "ts": "1700000000.000100", "url": "https://app.slack.com/client/T0001/C0001"}, p)
	})
	t.Run("with a bot token: the message permalink", func(t *testing.T) {
		cfg := testConfig()
		cfg.BotToken, cfg.APIURL = testBotToken, newFakeSlack(t).APIURL()
		h := newHarness(t, cfg, harnessOpts{})
		ev := with(messageEvent("C0001", "channel", "1700000000.000100", "done"), "thread_ts", "1700000000.000050")
		require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", ev)).Code)
		n := h.lastCall().Notifications[0]
		const url = "https://acme.slack.com/archives/C0001/p1700000000000100?thread_ts=1700000000.000050&cid=C0001"
		assert.Equal(t, url, n.Attributes.String("url"))
		var p map[string]any
		require.NoError(t, json.Unmarshal(n.Payload, &p))
		assert.Equal(t, "general", p["channel_name"])
		assert.Equal(t, "alice", p["user_name"])
		assert.Equal(t, url, p["url"])
	})
}

func TestKindAndPriorityOverrides(t *testing.T) {
	cfg := testConfig()
	cfg.Kinds = map[string]string{KindMessage: "slack-chatter"}
	cfg.Priorities = map[string]inbox.Priority{KindMessage: inbox.PriorityMedium, KindDM: inbox.PriorityUrgent}
	h := newHarness(t, cfg, harnessOpts{})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?"))).Code)
	n := h.lastCall().Notifications[0]
	assert.Equal(t, "slack-chatter", n.Kind)
	assert.Equal(t, inbox.PriorityMedium, n.Priority)

	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev02", messageEvent("D024BE91L", "im", "1700000000.000200", "psst"))).Code)
	n = h.lastCall().Notifications[0]
	assert.Equal(t, KindDM, n.Kind)
	assert.Equal(t, inbox.PriorityUrgent, n.Priority)
}

func TestIgnoreSubtypesAndAllowedBots(t *testing.T) {
	botMsg := map[string]any{"type": "message", "subtype": "bot_message", "ts": "1700000000.000100", "text": "deploy finished",
		"bot_id": "BB12033", "username": "github", "channel": "C0001", "channel_type": "channel", "event_ts": "1700000000.000100"}

	cfg := testConfig()
	cfg.AllowedBots = []string{"GitHub"}
	h := newHarness(t, cfg, harnessOpts{})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", botMsg)).Code)
	n := h.lastCall().Notifications[0]
	assert.Equal(t, "github in #C0001: deploy finished", n.Summary)
	assert.Equal(t, "BB12033", n.Metadata[connectors.MetaAuthor])
	assert.Equal(t, true, n.Metadata[connectors.MetaAuthorIsBot])

	cfg = testConfig()
	cfg.IgnoreSubtypes = []string{} // explicitly none
	h = newHarness(t, cfg, harnessOpts{})
	join := map[string]any{"type": "message", "subtype": "channel_join", "ts": "1700000000.000200", "user": testUser,
		"text": "<@U061F7AUR> has joined the channel", "channel": "C0001", "channel_type": "channel", "event_ts": "1700000000.000200"}
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev02", join)).Code)
	assert.Equal(t, "U061F7AUR in #C0001: @U061F7AUR has joined the channel", h.lastCall().Notifications[0].Summary)
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev03", botMsg)).Code, "bots route when bot_message is not ignored")
}

func TestBotUserFromAuthorizations(t *testing.T) {
	cfg := testConfig()
	cfg.BotUserID = "" // taken from the event's authorizations (is_bot: true)
	h := newHarness(t, cfg, harnessOpts{})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "hey <@U0BOT>"))).Code)
	assert.Equal(t, KindMention, h.lastCall().Notifications[0].Kind)
	own := with(messageEvent("C0001", "channel", "1700000000.000200", "on it"), "user", testBot, "bot_id", "B0BOT")
	require.Equal(t, http.StatusAccepted, h.post(callback(t, "Ev02", own)).Code)
	assert.Equal(t, "written by the configured bot U0BOT", h.lastCall().Event.Error)
}

func TestFileShareWithoutText(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	ev := with(messageEvent("D024BE91L", "im", "1700000000.000100", ""), "subtype", "file_share",
		"files", []any{map[string]any{"id": "F0001", "name": "report.pdf", "title": "Q3 report", "mimetype": "application/pdf"}})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", ev)).Code)
	n := h.lastCall().Notifications[0]
	assert.Equal(t, "U061F7AUR in a direct message: [file: report.pdf]", n.Summary)
}
