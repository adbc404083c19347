package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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

func TestSignatureAccepted(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post(dmBody(t, "Ev01"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := decodeOutcome(t, rec)
	assert.Equal(t, inbox.EventRouted, out.Status)
	assert.Equal(t, 1, out.Records)
	assert.False(t, out.Duplicate)
}

func TestSignatureRejected(t *testing.T) {
	body := dmBody(t, "Ev01")
	for name, prepare := range map[string]func(h *harness, r *http.Request){
		"bad signature": func(_ *harness, r *http.Request) {
			ts, _ := strconv.ParseInt(r.Header.Get(HeaderTimestamp), 10, 64)
			r.Header.Set(HeaderSignature, sign("wrong secret", ts, body))
		},
		"missing signature": func(_ *harness, r *http.Request) { r.Header.Del(HeaderSignature) },
		"missing timestamp": func(_ *harness, r *http.Request) { r.Header.Del(HeaderTimestamp) },
		"garbage signature": func(_ *harness, r *http.Request) { r.Header.Set(HeaderSignature, "v0=zz") },
		"v1 signature": func(_ *harness, r *http.Request) {
			r.Header.Set(HeaderSignature, strings.Replace(r.Header.Get(HeaderSignature), "v0=", "v1=", 1))
		},
		"body changed after signing": func(_ *harness, r *http.Request) {
			changed := bytes.Replace(body, []byte("can you hear me"), []byte("can you pay me.."), 1)
			r.Body = io.NopCloser(bytes.NewReader(changed))
		},
		"timestamp changed after signing": func(_ *harness, r *http.Request) {
			ts, _ := strconv.ParseInt(r.Header.Get(HeaderTimestamp), 10, 64)
			r.Header.Set(HeaderTimestamp, strconv.FormatInt(ts+1, 10))
		},
		"stale timestamp (signed 6 minutes ago)": func(h *harness, r *http.Request) {
			ts := h.clock.Now().Add(-6 * time.Minute).Unix()
			r.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
			r.Header.Set(HeaderSignature, sign(testSecret, ts, body))
		},
		"stale by the injected clock (received 6 minutes after signing)": func(h *harness, _ *http.Request) {
			h.clock.Add(6 * time.Minute)
		},
		"timestamp 6 minutes in the future": func(h *harness, r *http.Request) {
			ts := h.clock.Now().Add(6 * time.Minute).Unix()
			r.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
			r.Header.Set(HeaderSignature, sign(testSecret, ts, body))
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig(), harnessOpts{})
			req := h.newRequest(body)
			prepare(h, req)
			rec := h.do(req)
			require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
			assert.Equal(t, "missing or invalid credentials", errorMessage(t, rec.Body.Bytes()), "no detail for a forger")
			assert.Empty(t, h.fake.Calls(), "nothing stored")
		})
	}
}

func TestWithinWindowAccepted(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	req := h.newRequest(dmBody(t, "Ev01"))
	h.clock.Add(4*time.Minute + 59*time.Second)
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestVerifiedButUnreadable: once the signature holds, Slack's retries cannot fix the
// body, so it is stored (invalid, for replay) and answered 202, never 400.
func TestVerifiedButUnreadable(t *testing.T) {
	for name, c := range map[string]struct {
		body   string
		status inbox.EventStatus
	}{
		"truncated JSON":                     {`{"token":"XXYYZZ","team_id":"T0001","type":"event_callback","event":{`, inbox.EventInvalid},
		"not JSON":                           {`payload=hello`, inbox.EventInvalid},
		"JSON array":                         {`[{"type":"event_callback"}]`, inbox.EventInvalid},
		"JSON null":                          {`null`, inbox.EventInvalid},
		"url_verification without challenge": {`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","type":"url_verification"}`, inbox.EventIgnored},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig(), harnessOpts{})
			rec := h.post([]byte(c.body))
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			call, ok := h.fake.Last()
			require.True(t, ok, "stored")
			assert.Equal(t, c.status, call.Event.Status)
			assert.NotEmpty(t, call.Event.Error)
			assert.Empty(t, call.Notifications)
		})
	}
}

func TestOverBodyLimit(t *testing.T) {
	const limit = 64 << 10
	big := callback(t, "Ev01", messageEvent("C0001", "channel", "1700000000.000100", strings.Repeat("x", limit)))
	t.Run("content-length", func(t *testing.T) {
		h := newHarness(t, testConfig(), harnessOpts{limit: limit})
		rec := h.post(big)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
		assert.Empty(t, h.fake.Calls())
	})
	t.Run("chunked", func(t *testing.T) {
		h := newHarness(t, testConfig(), harnessOpts{limit: limit})
		req := h.newRequest(big)
		req.ContentLength = -1 // no length up front: the limit trips while reading
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(big)))
		rec := h.do(req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
		assert.Equal(t, "1", rec.Header().Get(HeaderNoRetry))
		assert.Empty(t, h.fake.Calls())
	})
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

func TestRetryIsDuplicate(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	body := callback(t, "Ev0LAN670R", appMention("C0001", "1515449522.000016", "What is the hour of the pearl, <@U0BOT>?"))

	first := h.post(body)
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	out := decodeOutcome(t, first)
	require.False(t, out.Duplicate)
	require.Equal(t, 1, out.Records)

	h.clock.Add(time.Minute)
	req := h.newRequest(body) // Slack signs each retry afresh
	req.Header.Set(HeaderRetryNum, "1")
	req.Header.Set(HeaderRetryReason, "http_timeout")
	again := h.do(req)
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	dup := decodeOutcome(t, again)
	assert.True(t, dup.Duplicate)
	assert.Equal(t, out.EventID, dup.EventID)

	calls := h.fake.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[1].Duplicate)
	assert.Equal(t, "Ev0LAN670R", calls[1].Event.DeliveryID)
	assert.Equal(t, "1", calls[1].Event.Headers[HeaderRetryNum])
	assert.Equal(t, "http_timeout", calls[1].Event.Headers[HeaderRetryReason])
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

func TestWrongShapeStoredAsInvalid(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post([]byte(`{"token":"XXYYZZ","team_id":"T0001","type":"event_callback","event_id":"Ev05","event":{"type":"message","text":42,"ts":"1.2","channel":"C0001"}}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call := h.lastCall()
	assert.Equal(t, inbox.EventInvalid, call.Event.Status)
	assert.Equal(t, `decode event: field "text" has the wrong type`, call.Event.Error)
	assert.Equal(t, "Ev05", call.Event.DeliveryID)
}

func TestUnknownConnector(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.do(newSignedRequest("nope", dmBody(t, "Ev01"), h.clock.Now().Unix()))
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, errorMessage(t, rec.Body.Bytes()), `"nope"`)
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
