package slack

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

func dmBody(t *testing.T, eventID string) []byte {
	return callback(t, eventID, messageEvent("D024BE91L", "im", "1355517523.000005", "Hello hello can you hear me?"))
}

// TestV1SignatureRejected: only the v0 scheme is accepted.
func TestV1SignatureRejected(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	req := h.newRequest(dmBody(t, "Ev01"))
	req.Header.Set(HeaderSignature, strings.Replace(req.Header.Get(HeaderSignature), "v0=", "v1=", 1))
	rec := h.do(req)
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	assert.Equal(t, "missing or invalid credentials", errorMessage(t, rec.Body.Bytes()))
	assert.Empty(t, h.fake.Calls(), "nothing stored")
}

// TestURLVerificationWithoutChallengeStored: a handshake without its challenge is
// no handshake; it is stored (ignored), never refused.
func TestURLVerificationWithoutChallengeStored(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post([]byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","type":"url_verification"}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, inbox.EventIgnored, call.Event.Status)
	assert.NotEmpty(t, call.Event.Error)
	assert.Empty(t, call.Notifications)
}

func TestURLVerification(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	// https://api.slack.com/events/url_verification
	body := []byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	rec := h.post(body)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", rec.Body.String())
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"))
	assert.Empty(t, h.fake.Calls(), "a handshake is not an event")

	req := h.newRequest(body)
	req.Header.Set(HeaderSignature, sign("wrong", h.clock.Now().Unix(), body))
	assert.Equal(t, http.StatusUnauthorized, h.do(req).Code, "the handshake is verified too")
}

// TestRetryHeadersKept: a retry is a duplicate (the conformance suite's) that keeps
// why Slack retried.
func TestRetryHeadersKept(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	body := callback(t, "Ev0LAN670R", appMention("C0001", "1515449522.000016", "What is the hour of the pearl, <@U0BOT>?"))
	require.Equal(t, http.StatusOK, h.post(body).Code)

	h.clock.Add(time.Minute)
	req := h.newRequest(body) // Slack signs each retry afresh
	req.Header.Set(HeaderRetryNum, "1")
	req.Header.Set(HeaderRetryReason, "http_timeout")
	again := h.do(req)
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	assert.True(t, decodeOutcome(t, again).Duplicate)
	call := h.lastCall()
	assert.True(t, call.Duplicate)
	assert.Equal(t, "1", call.Event.Headers[HeaderRetryNum])
	assert.Equal(t, "http_timeout", call.Event.Headers[HeaderRetryReason])
}

func TestStoredEvent(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post(callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?")))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	ev := h.lastCall().Event
	assert.Equal(t, "slack", ev.Source)
	assert.Equal(t, "acme", ev.Connector)
	assert.Equal(t, "Ev01", ev.DeliveryID)
	assert.Equal(t, "message", ev.Type)
	assert.Equal(t, h.clock.Now().UTC(), ev.ReceivedAt)
	assert.Equal(t, strconv.FormatInt(h.clock.Now().Unix(), 10), ev.Headers[HeaderTimestamp])
	assert.Equal(t, "Slackbot 1.0 (+https://api.slack.com/robots)", ev.Headers["User-Agent"])
	for k := range ev.Headers {
		assert.NotContains(t, strings.ToLower(k), "signature")
	}
	// Stored as received, but for the legacy verification token: a credential.
	sent := callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", "lunch?"))
	require.Contains(t, string(sent), `"token":"XXYYZZ"`)
	var want map[string]any
	require.NoError(t, json.Unmarshal(sent, &want))
	delete(want, "token")
	wantJSON, _ := json.Marshal(want)
	assert.JSONEq(t, string(wantJSON), string(ev.Body))
	assert.NotContains(t, string(ev.Body), "XXYYZZ")
}

func TestWithoutToken(t *testing.T) {
	// A body without a token is kept byte for byte; text is not HTML-escaped.
	plain := []byte(`{"type": "event_callback",  "event": {"text": "a <b> & c"}}`)
	assert.Equal(t, plain, withoutToken(plain))
	got := withoutToken([]byte(`{"token":"XXYYZZ","type":"event_callback","event":{"text":"a <b> & c"}}`))
	assert.JSONEq(t, `{"type":"event_callback","event":{"text":"a <b> & c"}}`, string(got))
	assert.Contains(t, string(got), `a <b> & c`)
	assert.Equal(t, []byte(`{"token":`), withoutToken([]byte(`{"token":`)), "unreadable bodies are kept as they are")
}

func TestUnmappedEventStored(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	// https://api.slack.com/events/reaction_added
	rec := h.post(callback(t, "Ev02", map[string]any{
		"type": "reaction_added", "user": testUser, "reaction": "thumbsup", "item_user": testBot,
		"item":     map[string]any{"type": "message", "channel": "C0001", "ts": "1360782400.498405"},
		"event_ts": "1360782804.083113",
	}))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	assert.Equal(t, inbox.EventIgnored, decodeOutcome(t, rec).Status)
	call := h.lastCall()
	assert.Equal(t, "reaction_added", call.Event.Type)
	assert.Equal(t, `event type "reaction_added" is not mapped`, call.Event.Error)
	assert.Empty(t, call.Notifications)
}

func TestUnknownInnerTypeStored(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post(callback(t, "Ev03", map[string]any{"type": "brand_new_event", "event_ts": "1700000000.000100"}))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, "brand_new_event", call.Event.Type)
	assert.Equal(t, inbox.EventIgnored, call.Event.Status)
}

func TestAppRateLimitedStored(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	// https://api.slack.com/apis/events-api#rate-limiting
	rec := h.post([]byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","type":"app_rate_limited","team_id":"T0001","minute_rate_limited":1518467820,"api_app_id":"A0KRD7HC3"}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, "app_rate_limited", call.Event.Type)
	assert.Equal(t, inbox.EventIgnored, call.Event.Status)
	assert.Contains(t, call.Event.Error, "rate-limiting")
}

func TestMalformedBlockFallsBack(t *testing.T) {
	// A block slack-go cannot decode makes ParseEvent reject the whole event; the
	// message must still arrive.
	h := newHarness(t, testConfig(), harnessOpts{})
	ev := with(messageEvent("C0001", "channel", "1700000000.000100", "hey <@U0BOT> the build is red"),
		"blocks", []any{map[string]any{"type": "section", "text": 5}})
	rec := h.post(callback(t, "Ev04", ev))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, inbox.EventRouted, call.Event.Status)
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, KindMention, n.Kind)
	assert.Equal(t, "U061F7AUR in #C0001: hey @U0BOT the build is red", n.Summary)
}

func TestSocketModeConnectorHasNoHTTPEndpoint(t *testing.T) {
	cfg := Config{Name: "acme", SocketMode: true, AppToken: testAppToken, BotUserID: testBot}
	h := newHarness(t, cfg, harnessOpts{})
	rec := h.post(dmBody(t, "Ev01"))
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Empty(t, h.fake.Calls())
}

func TestIngestFailureIs500(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	h.fake.Err = errors.New("disk full")
	rec := h.post(dmBody(t, "Ev01"))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.NotContains(t, rec.Body.String(), "disk full")
	assert.Empty(t, rec.Header().Get(HeaderNoRetry), "Slack should retry")
}

func TestDeliverAsMessage(t *testing.T) {
	routes := []connectors.RouteConfig{{
		Name:      "dms",
		Match:     connectors.RouteMatch{Source: inbox.StringList{"slack"}, ChannelType: inbox.StringList{"im"}},
		Thread:    connectors.ThreadConfig{Agent: "support", Resource: "slack:{{.Team}}", Thread: "dm:{{.User}}"},
		DeliverAs: inbox.DeliverAsMessage,
	}}
	h := newHarness(t, testConfig(), harnessOpts{routes: routes})
	rec := h.post(callback(t, "Ev01", messageEvent("D024BE91L", "im", "1355517523.000005", "line one\nline <https://example.com|two>")))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	n := h.lastCall().Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "support", Resource: "slack:T0001", Thread: "dm:U061F7AUR"}, n.Thread)
	assert.Equal(t, "line one\nline two (https://example.com)", n.Summary, "the sender's own words")
	assert.Equal(t, "U061F7AUR", n.Attributes.String("name"))
	assert.Equal(t, "slack", n.Attributes.String("from"))
}
