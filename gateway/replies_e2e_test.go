package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	replySigning = "s3cret-signing-replies-0123"
	replyToken   = "support-agent-token-0123456789"
)

// slackEvent is a signed Events API callback for the acme app (A0KRD7HC3, bot U0BOT).
func slackEvent(t *testing.T, eventID string, inner map[string]any) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"token": "XXYYZZ", "team_id": "T0001", "api_app_id": "A0KRD7HC3", "type": "event_callback",
		"event_id": eventID, "event_time": 1700000000, "event": inner,
		"authorizations": []any{map[string]any{"team_id": "T0001", "user_id": "U0BOT", "is_bot": true}},
	})
	require.NoError(t, err)
	return body
}

// postSlack delivers a signed Events API body to the gateway at base.
func postSlack(t *testing.T, base string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/slack/acme", bytes.NewReader(body))
	require.NoError(t, err)
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slack.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(slack.HeaderSignature, webapitest.Sign(replySigning, ts, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// agentCall sends an agent API request with the support agent's token.
func agentCall(t *testing.T, method, u string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+replyToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, out), "%s %s: %s", method, u, raw)
	}
	return resp.StatusCode
}

// repliesConfig is a gateway with an inbox-only agent answering Slack DMs through the
// Slack Web API at apiURL.
func repliesConfig(listen, driver, dsn, apiURL string) string {
	return fmt.Sprintf(`
server: { listen: %q, shutdown_grace: 2s }
storage: { driver: %s, dsn: %q, max_open_conns: 8 }
log: { level: warn, format: json }
dispatch: { lease: 2s, poll_interval: 500ms }
replies: { lease: 2s, poll_interval: 300ms }
agents:
  - { id: support, token: %s }
connectors:
  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]
routes:
  - name: dms
    match: { source: slack }
    thread: { agent: support, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" }
`, listen, driver, dsn, replyToken, replySigning, apiURL)
}

// TestReplyRoundTripThroughSlack: a person's DM becomes a record with replyTo; the
// agent answers it through the API; the answer is posted into the DM with its marker;
// Slack sends the bot's message back as an event, which is stored ignored "own reply"
// and never becomes a notification.
func TestReplyRoundTripThroughSlack(t *testing.T) {
	api := webapitest.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(repliesConfig("127.0.0.1:0", "sqlite", filepath.Join(dir, "gw.db"), api.APIURL())), 0o600))
	c, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(c, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	explain := store.NewExplain(m.Store)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	base := "http://" + m.Addr().String()
	thread := base + "/v1/agents/support/threads/" + url.PathEscape("slack:T0001") + "/" + url.PathEscape("dm:U0JANE")

	code, out := postSlack(t, base, slackEvent(t, "Ev01", map[string]any{"type": "message", "user": "U0JANE",
		"text": "is the build green?", "ts": "1700000000.000100", "team": "T0001", "channel": "D0JANE",
		"event_ts": "1700000000.000100", "channel_type": "im"}))
	require.Equal(t, http.StatusOK, code, out)

	var page struct {
		Notifications []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"notifications"`
	}
	require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, thread+"/notifications", nil, &page))
	require.Len(t, page.Notifications, 1)
	assert.Equal(t, map[string]any{"source": "slack", "connector": "acme", "team": "T0001", "channel": "D0JANE"},
		page.Notifications[0].Metadata["replyTo"])

	var accepted map[string]any
	require.Equal(t, http.StatusAccepted, agentCall(t, http.MethodPost, thread+"/replies",
		map[string]any{"id": "answer-1", "text": "Yes, **green** <!channel>"}, &accepted))
	assert.Equal(t, "queued", accepted["status"])

	var posted webapitest.Call
	for posted.Method != "chat.postMessage" {
		select {
		case posted = <-api.Calls:
		case <-time.After(procWait):
			t.Fatal("no chat.postMessage")
		}
	}
	assert.Equal(t, "D0JANE", posted.Form.Get("channel"))
	assert.Equal(t, "Yes, *green* &lt;!channel&gt;", posted.Form.Get("text"), "mrkdwn, no ping")
	require.NotEmpty(t, posted.TS)

	// The bot's message comes back as Slack sends it: by the bot user, through the app,
	// with the metadata the post carried (whether or not the outbox recorded it yet).
	msgs := api.Posted("D0JANE")
	require.Len(t, msgs, 1)
	echo := map[string]any{"type": "message", "user": "U0BOT", "bot_id": "B0ACME", "app_id": "A0KRD7HC3",
		"text": posted.Form.Get("text"), "ts": posted.TS, "team": "T0001", "channel": "D0JANE",
		"event_ts": posted.TS, "channel_type": "im",
		"metadata": map[string]any{"event_type": slack.ReplyEventType, "event_payload": map[string]any{slack.ReplyIDKey: "answer-1"}}}
	code, out = postSlack(t, base, slackEvent(t, "Ev02", echo))
	require.Equal(t, http.StatusAccepted, code, out)
	var ack struct {
		EventID string `json:"eventId"`
		Status  string `json:"status"`
		Records int    `json:"records"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ack))
	assert.Equal(t, "ignored", ack.Status)
	assert.Zero(t, ack.Records)
	ev, err := explain.GetEvent(context.Background(), ack.EventID)
	require.NoError(t, err)
	assert.Equal(t, "own reply", ev.Error)

	// Once the outbox has recorded where the post went, the same message without its
	// metadata (a client that drops it) is recognised by the recorded ts.
	var got map[string]any
	deadline := time.Now().Add(procWait)
	for {
		require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, thread+"/replies/answer-1", nil, &got))
		if got["status"] == "sent" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the outbox records in its own goroutine
	}
	require.Equal(t, "sent", got["status"], "%v", got)
	assert.Equal(t, "D0JANE/"+posted.TS, got["platformId"])
	delete(echo, "metadata")
	code, out = postSlack(t, base, slackEvent(t, "Ev03", echo))
	require.Equal(t, http.StatusAccepted, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &ack))
	ev, err = explain.GetEvent(context.Background(), ack.EventID)
	require.NoError(t, err)
	assert.Equal(t, "own reply", ev.Error)

	require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, thread+"/notifications", nil, &page))
	assert.Len(t, page.Notifications, 1, "the agent never hears itself")
	assert.Len(t, api.Posted("D0JANE"), 1, "posted once")
}
