package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/mastra/mastratest"
)

const (
	approvalSigning = "8f742231b10e8888abcd99yyyzzz85a5"
	approvalToken   = "support-token-0123456789"
	waitLong        = 60 * time.Second
)

type approvalEnv struct {
	t     *testing.T
	m     *Gateway
	slack *webapitest.Server
	base  string // the Mastra harness
}

// newApprovalEnv runs the gateway against the real Mastra harness (a mastra agent
// whose deploy tool needs approval) and a fake Slack Web API, with DMs routed to the
// agent and approvals on the same Slack app.
func newApprovalEnv(t *testing.T) *approvalEnv {
	base := mastratest.Server(t, 300*time.Millisecond)
	api := webapitest.New(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: sqlite, dsn: %q }
agents:
  - id: support
    token: %s
    target: { kind: mastra, url: %q, agent_id: interopAgent, timeout: 20s }
connectors:
  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]
routes:
  - name: dms
    match: { source: slack }
    thread: { agent: support, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" }
    priority: urgent
approvals:
  slack_connector: acme
  approvers: [ U0JANE, S0OPS ]
`, filepath.Join(dir, "gw.db"), approvalToken, base, approvalSigning, api.APIURL())
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	c, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(c, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	api.SetGroup("S0OPS", "U0BOB")
	return &approvalEnv{t: t, m: m, slack: api, base: base}
}

// post sends a signed request to a Slack path of the gateway.
func (e *approvalEnv) post(path, contentType string, body []byte) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+e.m.Addr().String()+path, bytes.NewReader(body))
	require.NoError(e.t, err)
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(slack.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(slack.HeaderSignature, webapitest.Sign(approvalSigning, ts, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

// dm delivers a message.im event (Slack's documented Events API envelope).
func (e *approvalEnv) dm(user, channel, ts, text string) {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{
		"token": "XXYYZZ", "team_id": "T0001", "api_app_id": "A0KRD7HC3", "type": "event_callback",
		"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": 1700000000,
		"event": map[string]any{"type": "message", "user": user, "text": text, "ts": ts, "team": "T0001",
			"channel": channel, "event_ts": ts, "channel_type": "im"},
		"authorizations": []any{map[string]any{"team_id": "T0001", "user_id": "U0BOT", "is_bot": true}},
	})
	require.NoError(e.t, err)
	code, out := e.post("/webhooks/slack/acme", "application/json", body)
	require.Equal(e.t, http.StatusOK, code, out)
}

func (e *approvalEnv) click(c webapitest.Click) {
	e.t.Helper()
	code, out := e.post("/webhooks/slack/acme/interactions", "application/x-www-form-urlencoded", webapitest.BlockActions(c))
	require.Equal(e.t, http.StatusOK, code, out)
}

// call waits for the next Web API call of method (others are skipped: name lookups).
func (e *approvalEnv) call(method string) webapitest.Call {
	e.t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case c := <-e.slack.Calls:
			if c.Method == method {
				return c
			}
		case <-deadline:
			e.t.Fatalf("no %s call", method)
		}
	}
}

// runs follows the thread's stream and returns its run frames' statuses.
func (e *approvalEnv) runs(k inbox.ThreadKey) <-chan string {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := fmt.Sprintf("http://%s/v1/agents/%s/threads/%s/%s/stream", e.m.Addr(), k.Agent, pathEscape(k.Resource), pathEscape(k.Thread))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+approvalToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	out := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "run":
				var f struct{ Status string }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f) == nil {
					out <- f.Status
				}
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return out
}

func pathEscape(s string) string { return strings.ReplaceAll(s, ":", "%3A") }

func waitStatus(t *testing.T, runs <-chan string, want string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case s := <-runs:
			if s == want {
				return
			}
		case <-deadline:
			t.Fatalf("no run %s", want)
		}
	}
}

func (e *approvalEnv) deploys() int {
	e.t.Helper()
	resp, err := http.Get(e.base + "/test/tools")
	require.NoError(e.t, err)
	defer resp.Body.Close()
	var out struct{ Deploy int }
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Deploy
}

func (e *approvalEnv) only(k inbox.ThreadKey) approval.Approval {
	e.t.Helper()
	page, _, err := store.NewApprovals(e.m.Store).ListApprovals(context.Background(), approval.Filter{Agent: k.Agent, Resource: k.Resource, Thread: k.Thread})
	require.NoError(e.t, err)
	require.Len(e.t, page, 1)
	return page[0]
}

// A Mastra run that needs approval pauses; the approval is recorded and posted to the DM
// the run came from; an outsider's click is refused; Jane's approves it; the run resumes,
// the tool runs and the run finishes; a replayed click changes nothing. A group
// member's decline keeps the tool from running.
func TestApprovalFromSlackWithRealMastra(t *testing.T) {
	e := newApprovalEnv(t)
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T0001", Thread: "dm:U0ANN"}
	runs := e.runs(k)
	e.dm("U0ANN", "D0ANN", "1700000100.000100", "please deploy, needs-approval")
	waitStatus(t, runs, "open")

	post := e.call("chat.postMessage")
	require.Equal(t, "D0ANN", post.Form.Get("channel"), "posted to the DM the run's Slack message came from")
	require.Empty(t, post.Form.Get("thread_ts"), "a DM is its own place")
	a := e.only(k)
	require.Equal(t, approval.StatusPending, a.Status)
	require.Equal(t, approval.OriginMastra, a.Origin)
	require.Equal(t, "deploy", a.Tool)
	require.NotEmpty(t, a.RunID)
	require.NotEmpty(t, a.ToolCallID)
	require.Contains(t, post.Form.Get("blocks"), `"value":"`+a.ID+`"`)
	live, err := e.m.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.NotNil(t, live, "the suspended run keeps the thread active")

	btn := webapitest.Click{ActionID: slack.ActionApprove, Value: a.ID, UserID: "U0EVE", UserName: "eve",
		Channel: "D0ANN", MessageTS: post.TS}
	e.click(btn)
	refusal := e.call("chat.postEphemeral")
	require.Equal(t, "U0EVE", refusal.Form.Get("user"))
	require.Contains(t, refusal.Form.Get("text"), "not one of the approvers")
	require.Equal(t, approval.StatusPending, e.only(k).Status)
	require.Zero(t, e.deploys())

	btn.UserID, btn.UserName = "U0JANE", "jane"
	e.click(btn)
	update := e.call("chat.update")
	require.Equal(t, post.TS, update.Form.Get("ts"), "the posted message shows the decision")
	require.Contains(t, update.Form.Get("text"), "Approved by <@U0JANE>")
	waitStatus(t, runs, "finished")
	require.Equal(t, 1, e.deploys(), "the tool ran once approved")
	decided := e.only(k)
	require.Equal(t, approval.StatusApproved, decided.Status)
	require.Equal(t, "U0JANE", decided.DecidedBy)
	require.NotNil(t, decided.DecidedAt)
	require.Equal(t, "D0ANN", decided.Channel)
	require.Equal(t, post.TS, decided.MessageTS)

	// The same click again (Slack retried, or someone replayed it): a polite no-op.
	e.click(btn)
	again := e.call("chat.postEphemeral")
	require.Contains(t, again.Form.Get("text"), "already approved")
	require.Equal(t, 1, e.deploys())
	require.Equal(t, approval.StatusApproved, e.only(k).Status)

	// A group member declines another run's call: the run finishes without the tool.
	k2 := inbox.ThreadKey{Agent: "support", Resource: "slack:T0001", Thread: "dm:U0CAL"}
	runs2 := e.runs(k2)
	e.dm("U0CAL", "D0CAL", "1700000200.000100", "deploy again, needs-approval")
	post = e.call("chat.postMessage")
	b := e.only(k2)
	e.click(webapitest.Click{ActionID: slack.ActionDecline, Value: b.ID, UserID: "U0BOB", UserName: "bob",
		Channel: "D0CAL", MessageTS: post.TS})
	update = e.call("chat.update")
	require.Contains(t, update.Form.Get("text"), "Declined by <@U0BOB>")
	waitStatus(t, runs2, "finished")
	require.Equal(t, approval.StatusDeclined, e.only(k2).Status)
	require.Equal(t, 1, e.deploys(), "a declined tool never runs")
}

func TestApprovalsConfigNamesKeys(t *testing.T) {
	got := problems(t, `
agents: [ { id: coder, token: dev-only-coder-token } ]
connectors:
  slack:
    - { name: acme, signing_secret: s3cret-signing-0123, bot_token: xoxb-1 }
    - { name: nobot, signing_secret: s3cret-signing-0123 }
approvals:
  slack_connector: nobot
  channel: "#ops"
  approvers: [ jane, S0OPS ]
  expire_after: -1h
`, noEnv)
	require.Equal(t, []string{
		`approvals.slack_connector: connectors.slack "nobot" needs bot_token (to post) and signing_secret (to verify clicks), and no socket_mode (clicks come to the HTTP interactivity URL)`,
		`approvals.channel: "#ops" is not a Slack channel id (like C0123ABCD)`,
		`approvals.approvers[0]: "jane" is not a Slack user id (U…, W…) or user group id (S…)`,
		`approvals.expire_after: must not be negative`,
	}, got)
	// A Socket Mode app gets its clicks over the socket, which takes none.
	require.Contains(t, problems(t, `
agents: [ { id: coder, token: dev-only-coder-token } ]
connectors:
  slack:
    - { name: sock, signing_secret: s3cret-signing-0123, bot_token: xoxb-1, socket_mode: true, app_token: xapp-1 }
approvals: { slack_connector: sock, approvers: [U0JANE] }
`, noEnv), `approvals.slack_connector: connectors.slack "sock" needs bot_token (to post) and signing_secret (to verify clicks), and no socket_mode (clicks come to the HTTP interactivity URL)`)
	require.Equal(t, []string{"approvals.slack_connector: no connectors.slack entry named \"gone\""},
		problems(t, minimal+"approvals: { slack_connector: gone, approvers: [U0JANE] }\n", env("CODER_TOKEN", "dev-only-coder-token")))
}
