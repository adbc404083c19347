package slack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// testSecret is the example signing secret of Slack's request-verification docs.
const testSecret = "8f742231b10e8888abcd99yyyzzz85a5"

const (
	testTeam = "T0001"
	testBot  = "U0BOT"
	testUser = "U061F7AUR"
)

func testConfig() Config {
	return Config{Name: "acme", SigningSecret: testSecret, BotUserID: testBot}
}

func allSlackRoutes() []connectors.RouteConfig {
	return []connectors.RouteConfig{{
		Name:   "all-slack",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"slack"}},
		Thread: connectors.ThreadConfig{Agent: "support", Resource: "slack:{{.Team}}", Thread: "{{.Channel}}"},
	}}
}

// clock is a settable test clock. It starts at the wall clock because slack-go
// checks the timestamp window against the wall clock as well.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t       testing.TB
	e       *echo.Echo
	fake    *connectorstest.Ingester
	clock   *clock
	handler *Handler
	cfg     Config
}

type harnessOpts struct {
	limit  server.ByteSize
	routes []connectors.RouteConfig
	ing    connectors.Ingester
	opts   []Option
	popts  []connectors.PipelineOption
}

func newHarness(t testing.TB, cfg Config, ho harnessOpts) *harness {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{BodyLimit: ho.limit}, log)
	if ho.routes == nil {
		ho.routes = allSlackRoutes()
	}
	router, err := connectors.NewRouter(ho.routes, []string{"support"})
	require.NoError(t, err)
	h := &harness{t: t, e: srv.Echo(), clock: newClock(), cfg: cfg}
	ing := ho.ing
	if ing == nil {
		h.fake = connectorstest.NewIngester()
		ing = h.fake
	}
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, ing, log, ho.popts...), log, h.clock.Now, ho.opts...)
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	h.handler = handler
	return h
}

func sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// newRequest builds a request signed now (by the harness clock), as Slack sends it.
func (h *harness) newRequest(body []byte) *http.Request {
	return newSignedRequest("acme", body, h.clock.Now().Unix())
}

func newSignedRequest(connector string, body []byte, ts int64) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/"+connector, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, sign(testSecret, ts, body))
	return req
}

func (h *harness) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func (h *harness) post(body []byte) *httptest.ResponseRecorder { return h.do(h.newRequest(body)) }

// lastCall returns the last ingested event; the test fails when there was none.
func (h *harness) lastCall() connectorstest.Ingested {
	h.t.Helper()
	call, ok := h.fake.Last()
	require.True(h.t, ok, "nothing was ingested")
	return call
}

func decodeOutcome(t testing.TB, rec *httptest.ResponseRecorder) connectors.Outcome {
	t.Helper()
	var out connectors.Outcome
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return out
}

func errorMessage(t testing.TB, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	return e.Error.Message
}

// callback wraps an inner event in the Events API event_callback envelope, as
// documented at https://api.slack.com/apis/events-api#callback-field.
func callback(t testing.TB, eventID string, inner map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"token":      "XXYYZZ",
		"team_id":    testTeam,
		"api_app_id": "A0KRD7HC3",
		"event":      inner,
		"type":       "event_callback",
		"event_id":   eventID,
		"event_time": 1700000000,
		"authorizations": []any{map[string]any{
			"enterprise_id": nil, "team_id": testTeam, "user_id": testBot,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
		"event_context":         "4-eyJldCI6Im1lc3NhZ2UiLCJ0aWQiOiJUMDAwMSIsImFpZCI6IkEwS1JEN0hDMyIsImNpZCI6IkMwMDAxIn0",
	})
	require.NoError(t, err)
	return b
}

// appMention is an app_mention event (https://api.slack.com/events/app_mention).
func appMention(channel, ts, text string) map[string]any {
	return map[string]any{
		"type": "app_mention", "user": testUser, "text": text, "ts": ts,
		"client_msg_id": "0a3a8a2e-2d4b-4a5f-8a46-5b9d2f2f1c11", "team": testTeam,
		"channel": channel, "event_ts": ts,
	}
}

// messageEvent is a message event (https://api.slack.com/events/message.channels
// and its im/mpim/groups siblings).
func messageEvent(channel, channelType, ts, text string) map[string]any {
	return map[string]any{
		"type": "message", "user": testUser, "text": text, "ts": ts,
		"client_msg_id": "5b1e2f6c-6f0a-4bd2-9b0e-3f2c3d4e5f60", "team": testTeam,
		"channel": channel, "event_ts": ts, "channel_type": channelType,
	}
}

// with returns a copy of ev with the given fields set.
func with(ev map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range ev {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func attrKeys(a inbox.Attributes) []string {
	var out []string
	for _, kv := range a {
		out = append(out, kv.Key)
	}
	return out
}
