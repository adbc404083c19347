package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

func TestRecordsCarryReplyTo(t *testing.T) {
	const ts, parent = "1700000000.000100", "1700000000.000050"
	to := func(channel, thread string) reply.To {
		return reply.NewTo("slack", "acme", Place{Team: testTeam, Channel: channel, ThreadTS: thread})
	}
	for name, tc := range map[string]struct {
		event map[string]any
		want  reply.To
	}{
		"channel message: under it":  {messageEvent("C0001", "channel", ts, "lunch?"), to("C0001", ts)},
		"app_mention: under it":      {appMention("C0001", ts, "<@U0BOT> help"), to("C0001", ts)},
		"private channel: under it":  {messageEvent("G0002", "group", ts, "plans"), to("G0002", ts)},
		"thread reply: its thread":   {with(messageEvent("C0001", "channel", ts, "done"), "thread_ts", parent), to("C0001", parent)},
		"direct message: top level":  {messageEvent("D024BE91L", "im", ts, "hi"), to("D024BE91L", "")},
		"group DM: top level":        {messageEvent("G024BE91L", "mpim", ts, "who?"), to("G024BE91L", "")},
		"thread in a DM: its thread": {with(messageEvent("D024BE91L", "im", ts, "and?"), "thread_ts", parent), to("D024BE91L", parent)},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig(), harnessOpts{})
			require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", tc.event)).Code)
			n := h.lastCall().Notifications[0]
			got, ok := reply.FromMetadata(n.Metadata)
			require.True(t, ok, "no replyTo in %v", n.Metadata)
			assert.Equal(t, tc.want, got)
		})
	}
}

// fakeOwn is the gateway's record of replies it sent: "<channel>/<ts>" per connector.
type fakeOwn struct {
	mu    sync.Mutex
	sent  map[string]bool // connector + " " + platform id
	err   error
	asked []string
}

func (f *fakeOwn) OwnReply(_ context.Context, source, connector, platformID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, source+" "+connector+" "+platformID)
	if f.err != nil {
		return false, f.err
	}
	return f.sent[connector+" "+platformID], nil
}

// The agent's own reply comes back as a message event. Posted through an app the
// connector routes (allowed_bots), and mentioning the bot, every other rule would make
// it a notification: it is stored ignored as "own reply" first.
func TestOwnRepliesAreIgnoredBeforeAnyRule(t *testing.T) {
	own := &fakeOwn{sent: map[string]bool{"acme C0001/1700000000.000300": true}}
	cfg := testConfig()
	cfg.AllowedBots = []string{"B0REPLY"}
	h := newHarness(t, cfg, harnessOpts{opts: []Option{WithOwnReplies(own)}})
	echo := with(messageEvent("C0001", "channel", "1700000000.000300", "<@U0BOT> *Fixed* in the PR"),
		"subtype", "bot_message", "bot_id", "B0REPLY", "user", "", "thread_ts", "1700000000.000100",
		"metadata", map[string]any{"event_type": ReplyEventType, "event_payload": map[string]any{ReplyIDKey: "r-1"}})
	rec := h.post(callback(t, "Ev01", echo))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, inbox.EventIgnored, call.Event.Status)
	assert.Equal(t, reply.OwnReason, call.Event.Error)
	assert.Empty(t, call.Notifications)
	assert.Equal(t, []string{"slack acme C0001/1700000000.000300"}, own.asked)

	// Replayed, it is still not an item.
	_, err := h.handler.Items(context.Background(), &call.Event)
	var nm *connectors.NotMapped
	require.ErrorAs(t, err, &nm)
	assert.Equal(t, reply.OwnReason, nm.Reason)

	// The same app's other messages, and a person's, route as before.
	other := with(echo, "ts", "1700000000.000400")
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev02", other)).Code)
	require.Len(t, h.lastCall().Notifications, 1)
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev03", messageEvent("C0002", "channel", "1700000000.000300", "same ts, other channel"))).Code)
}

// A failing lookup is no reason to lose an event: the other rules decide.
func TestOwnReplyLookupFailureAppliesTheOtherRules(t *testing.T) {
	own := &fakeOwn{err: errors.New("database is down")}
	h := newHarness(t, testConfig(), harnessOpts{opts: []Option{WithOwnReplies(own)}})
	require.Equal(t, http.StatusOK, h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?"))).Code)
	require.Len(t, h.lastCall().Notifications, 1)
	bot := with(messageEvent("C0001", "channel", "1700000000.000200", "on it"), "user", testBot)
	require.Equal(t, http.StatusAccepted, h.post(callback(t, "Ev02", bot)).Code)
	assert.Equal(t, "written by the configured bot U0BOT", h.lastCall().Event.Error)
}

// The reply's message event can overtake the outbox recording its ts (the gateway posts,
// Slack delivers the event, the record is written after): the marker in the message
// metadata, posted by this app or its bot user, is enough. The same marker from another
// app, or on a person's message, proves nothing and routes as before.
func TestMarkedOwnReplyIgnoredBeforeItIsRecorded(t *testing.T) {
	own := &fakeOwn{sent: map[string]bool{}} // nothing recorded yet
	cfg := testConfig()
	cfg.AllowedBots = []string{"B0OTHER", "B0REPLY"}
	h := newHarness(t, cfg, harnessOpts{opts: []Option{WithOwnReplies(own)}})
	marker := map[string]any{"event_type": ReplyEventType, "event_payload": map[string]any{ReplyIDKey: "r-1"}}
	base := messageEvent("C0001", "channel", "1700000000.000300", "<@U0BOT> fixed")

	for i, tc := range []struct {
		name string
		ev   map[string]any
	}{
		{"this app", with(base, "user", "U0OTHERBOT", "bot_id", "B0REPLY", "app_id", "A0KRD7HC3", "metadata", marker)},
		{"this app's bot profile", with(base, "user", "", "subtype", "bot_message", "bot_id", "B0REPLY",
			"bot_profile", map[string]any{"app_id": "A0KRD7HC3", "name": "gate"}, "metadata", marker)},
		{"the bot user", with(base, "user", testBot, "bot_id", "B0REPLY", "metadata", marker)},
	} {
		rec := h.post(callback(t, fmt.Sprintf("EvOwn%d", i), with(tc.ev, "ts", fmt.Sprintf("1700000001.%06d", i))))
		require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", tc.name, rec.Body.String())
		call := h.lastCall()
		assert.Equal(t, inbox.EventIgnored, call.Event.Status, tc.name)
		assert.Equal(t, reply.OwnReason, call.Event.Error, tc.name)
		assert.Empty(t, call.Notifications, tc.name)
	}

	for i, tc := range []struct {
		name string
		ev   map[string]any
	}{
		{"another app", with(base, "user", "U0OTHERBOT", "bot_id", "B0OTHER", "app_id", "A0OTHER",
			"bot_profile", map[string]any{"app_id": "A0OTHER", "name": "other"}, "metadata", marker)},
		{"a person", with(base, "metadata", marker)},
		{"this app without a marker", with(base, "user", "U0OTHERBOT", "bot_id", "B0REPLY", "app_id", "A0KRD7HC3",
			"metadata", map[string]any{"event_type": "something_else"})},
	} {
		rec := h.post(callback(t, fmt.Sprintf("EvStranger%d", i), with(tc.ev, "ts", fmt.Sprintf("1700000002.%06d", i))))
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", tc.name, rec.Body.String())
		call := h.lastCall()
		assert.NotEqual(t, reply.OwnReason, call.Event.Error, tc.name)
		assert.Len(t, call.Notifications, 1, tc.name)
	}
}
