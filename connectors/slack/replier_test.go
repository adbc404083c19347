package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/reply"
)

// fakeEpoch is the time of the fake Web API's message timestamps (1700000000.nnnnnn).
var fakeEpoch = time.Unix(1700000000, 0)

func newTestReplier(t *testing.T, cfgs ...Config) *Replier {
	t.Helper()
	r, err := NewReplier(cfgs, slog.New(slog.DiscardHandler), func() time.Time { return fakeEpoch })
	require.NoError(t, err)
	return r
}

func replyConfig(api *webapitest.Server) Config {
	cfg := testConfig()
	cfg.BotToken, cfg.APIURL = "xoxb-test-token", api.APIURL()
	return cfg
}

func threadReply(id, text string) reply.Reply {
	return reply.Reply{ID: id, Text: text, CreatedAt: fakeEpoch,
		To: reply.NewTo("slack", "acme", Place{Team: "T024BE7LD", Channel: "C0001", ThreadTS: "1699999999.000100"})}
}

func dmReply(id, text string) reply.Reply {
	return reply.Reply{ID: id, Text: text, CreatedAt: fakeEpoch,
		To: reply.NewTo("slack", "acme", Place{Team: "T024BE7LD", Channel: "D0001"})}
}

func TestReplierPostsIntoTheThreadWithItsMarker(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))

	sent, retry, err := r.Send(context.Background(), threadReply("r-1", "**Fixed** in <https://example.com/pr/1>, <!channel>"))
	require.NoError(t, err)
	assert.False(t, retry)
	call := nextCall(t, api)
	require.Equal(t, "chat.postMessage", call.Method)
	assert.Equal(t, "C0001", call.Form.Get("channel"))
	assert.Equal(t, "1699999999.000100", call.Form.Get("thread_ts"))
	assert.Equal(t, "*Fixed* in <https://example.com/pr/1>, &lt;!channel&gt;", call.Form.Get("text"))
	assert.Equal(t, "false", call.Form.Get("link_names"))
	var md struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	require.NoError(t, json.Unmarshal([]byte(call.Form.Get("metadata")), &md))
	assert.Equal(t, ReplyEventType, md.EventType)
	assert.Equal(t, map[string]any{ReplyIDKey: "r-1"}, md.EventPayload)
	assert.Equal(t, "C0001/"+call.TS, sent.PlatformID)
	// slacktest's auth.test names workspace T024BE7LD at https://localhost.localdomain/.
	assert.Equal(t, "https://localhost.localdomain/archives/C0001/p"+strings.Replace(call.TS, ".", "", 1)+
		"?thread_ts=1699999999.000100&cid=C0001", sent.URL)
}

// A DM is answered at its top level (replyTo without threadTs).
func TestReplierAnswersADMAtTopLevel(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	_, _, err := r.Send(context.Background(), dmReply("r-dm", "hello"))
	require.NoError(t, err)
	call := nextCall(t, api)
	assert.Equal(t, "D0001", call.Form.Get("channel"))
	assert.False(t, call.Form.Has("thread_ts"))
}

func TestReplierAllowMentions(t *testing.T) {
	api := webapitest.New(t)
	cfg := replyConfig(api)
	cfg.AllowMentions = true
	r := newTestReplier(t, cfg)
	_, _, err := r.Send(context.Background(), threadReply("r-m", "<!here> <@U0123ABCD> please look"))
	require.NoError(t, err)
	assert.Equal(t, "<!here> <@U0123ABCD> please look", nextCall(t, api).Form.Get("text"))
}

// After a crash between Slack's answer and recording it, Find sees the marker, in a
// thread (conversations.replies) and at a DM's top level (conversations.history), past
// several pages of other messages; another reply's id is not found.
func TestReplierFindsItsMarkerAfterACrash(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	ctx := context.Background()
	for _, mk := range []func(string, string) reply.Reply{threadReply, dmReply} {
		for i := range 25 { // the fake answers 10 messages a page
			_, _, err := r.Send(ctx, mk(fmt.Sprintf("other-%d", i), "noise"))
			require.NoError(t, err)
		}
		target := mk("r-crash", "the answer")
		sent, _, err := r.Send(ctx, target) // the gateway dies before recording this
		require.NoError(t, err)
		for i := range 5 {
			_, _, err := r.Send(ctx, mk(fmt.Sprintf("later-%d", i), "more"))
			require.NoError(t, err)
		}

		found, ok, err := r.Find(ctx, target)
		require.NoError(t, err)
		require.True(t, ok, "the marker of %s is not found", placeOf(target.To).Channel)
		assert.Equal(t, sent.PlatformID, found.PlatformID)
		assert.Equal(t, sent.URL, found.URL)

		_, ok, err = r.Find(ctx, mk("never-sent", "x"))
		require.NoError(t, err)
		assert.False(t, ok)
	}
}

// A message posted by someone else, without metadata, never counts as the reply.
func TestReplierFindIgnoresUnmarkedMessages(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	ctx := context.Background()
	cfg := replyConfig(api)
	plain := NewMessenger([]Config{cfg}, time.Minute, slog.New(slog.DiscardHandler), time.Now).apis["acme"]
	_, _, err := plain.PostMessageContext(ctx, "C0001", slack.MsgOptionText("signalgate_reply r-1", false), slack.MsgOptionTS("1699999999.000100"))
	require.NoError(t, err)
	_, ok, err := r.Find(ctx, threadReply("r-1", "x"))
	require.NoError(t, err)
	assert.False(t, ok)
}

// Another app in the conversation posts our marker with a guessed reply id: Find does not
// take it for ours (the reply would never be sent); our own bot's post is found.
func TestReplierFindTrustsOnlyItsOwnBot(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	ctx := context.Background()
	target := threadReply("r-guessed", "the answer")
	api.Seed("C0001", webapitest.Message{TS: "1700000000.500000", ThreadTS: placeOf(target.To).ThreadTS, Text: "gotcha",
		BotID: "B0OTHERAPP", Metadata: json.RawMessage(`{"event_type":"` + ReplyEventType + `","event_payload":{"` + ReplyIDKey + `":"r-guessed"}}`)})
	_, ok, err := r.Find(ctx, target)
	require.NoError(t, err)
	assert.False(t, ok, "another app's marker is not our reply")

	sent, _, err := r.Send(ctx, target)
	require.NoError(t, err)
	found, ok, err := r.Find(ctx, target)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent.PlatformID, found.PlatformID)
}

func TestReplierRateLimitCarriesRetryAfter(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	api.RateLimit("chat.postMessage", 7)
	_, retry, err := r.Send(context.Background(), threadReply("r-429", "hi"))
	require.Error(t, err)
	assert.True(t, retry)
	var ra *reply.RetryAfter
	require.ErrorAs(t, err, &ra)
	assert.Equal(t, 7*time.Second, ra.Wait)
	assert.Empty(t, api.Posted("C0001"))

	api.RateLimit("conversations.replies", 3)
	_, _, err = r.Find(context.Background(), threadReply("r-429", "hi"))
	require.ErrorAs(t, err, &ra)
	assert.Equal(t, 3*time.Second, ra.Wait)
}

func TestReplierPermanentAndTransientErrors(t *testing.T) {
	api := webapitest.New(t)
	r := newTestReplier(t, replyConfig(api))
	for code, wantRetry := range map[string]bool{
		"channel_not_found": false, "not_in_channel": false, "is_archived": false, "invalid_auth": false,
		"missing_scope": false, "internal_error": true, "service_unavailable": true, "ratelimited": true,
	} {
		api.Fail("chat.postMessage", code)
		_, retry, err := r.Send(context.Background(), threadReply("r-"+code, "hi"))
		require.Error(t, err, code)
		assert.Equal(t, wantRetry, retry, code)
		assert.Contains(t, err.Error(), code)
	}
}

func TestReplierCheckRefusesWhatSlackCannotTake(t *testing.T) {
	api := webapitest.New(t)
	noToken := testConfig()
	noToken.Name = "events-only"
	r := newTestReplier(t, replyConfig(api), noToken)
	ok := threadReply("r", "hi").To
	set := func(f func(*reply.To)) reply.To { to := ok; f(&to); return to }
	for name, tc := range map[string]struct {
		to   reply.To
		text string
		want error
	}{
		"github source":     {set(func(to *reply.To) { to.Source = "github" }), "hi", reply.ErrUnknownPlace},
		"unknown":           {set(func(to *reply.To) { to.Connector = "nope" }), "hi", reply.ErrUnknownPlace},
		"no bot_token":      {set(func(to *reply.To) { to.Connector = "events-only" }), "hi", reply.ErrNoCredentials},
		"no channel":        {set(func(to *reply.To) { editPlace(to, func(p *Place) { p.Channel = "" }) }), "hi", reply.ErrUnknownPlace},
		"markup channel":    {set(func(to *reply.To) { editPlace(to, func(p *Place) { p.Channel = "<!channel>" }) }), "hi", reply.ErrUnknownPlace},
		"bad thread":        {set(func(to *reply.To) { editPlace(to, func(p *Place) { p.ThreadTS = "yesterday" }) }), "hi", reply.ErrUnknownPlace},
		"too long":          {ok, strings.Repeat("x", MaxReplyChars+1), reply.ErrTooLong},
		"long once escaped": {ok, strings.Repeat("&", MaxReplyChars/4), reply.ErrTooLong},
	} {
		err := r.Check(tc.to, tc.text)
		require.ErrorIs(t, err, tc.want, name)
		_, retry, sendErr := r.Send(context.Background(), reply.Reply{ID: "x", To: tc.to, Text: tc.text})
		require.ErrorIs(t, sendErr, tc.want, name)
		assert.False(t, retry, name)
	}
	err := r.Check(set(func(to *reply.To) { to.Connector = "events-only" }), "hi")
	assert.Contains(t, err.Error(), "bot_token")
	require.NoError(t, r.Check(ok, strings.Repeat("x", MaxReplyChars)))
	require.NoError(t, r.Check(dmReply("r", "hi").To, "hi"))
	_, err = NewReplier([]Config{{Name: ""}}, nil, nil)
	require.Error(t, err)
	assert.Empty(t, api.Posted("C0001"), "a refused reply reached Slack")
	assert.False(t, errors.Is(r.Check(ok, "hi"), reply.ErrUnknownPlace))
}
