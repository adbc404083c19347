package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/gateway/gatewaytest"
)

const channelToken = "dev-only-coder-token"

// channelClient is interop/mcp/channel.mjs: the TypeScript MCP SDK's client in Claude
// Code's place, running `gateway channel` as its stdio server.
type channelClient struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan map[string]any
}

func (c *channelClient) send(cmd map[string]any) {
	c.t.Helper()
	raw, err := json.Marshal(cmd)
	require.NoError(c.t, err)
	_, err = c.stdin.Write(append(raw, '\n'))
	require.NoError(c.t, err)
}

// next is the next message of type typ the client printed; any other type fails.
func (c *channelClient) next(typ string) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		require.True(c.t, ok, "the client exited")
		require.Equal(c.t, typ, m["type"], "%v", m)
		return m
	case <-time.After(waitLong):
		c.t.Fatalf("no %s from the client", typ)
		return nil
	}
}

// channelEnv is a gateway process on a fixed port (so a restart comes back where the
// channel reconnects) with Slack DMs routed to a stream agent, approvals in Slack, and
// a fake Slack Web API.
type channelEnv struct {
	t     *testing.T
	cfg   string
	addr  string
	gw    *gatewayProc
	slack *webapitest.Server
}

func (e *channelEnv) dm(user, channel, ts, text string) {
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

func (e *channelEnv) post(path, contentType string, body []byte) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+e.addr+path, bytes.NewReader(body))
	require.NoError(e.t, err)
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(slack.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(slack.HeaderSignature, webapitest.Sign(approvalSigning, ts, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// call is the next Slack Web API call of method (name lookups and such skipped).
func (e *channelEnv) call(method string) webapitest.Call {
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

// TestClaudeCodeChannel: the TypeScript MCP SDK's client, in Claude Code's place, starts
// `gateway channel` over stdio against a real gateway. It sees the channel capability,
// receives each Slack DM as notifications/claude/channel in order and once — across a
// SIGKILL and restart of the gateway on the same data, the channel resuming where it
// left off —, answers through the reply tool and Slack gets that answer exactly once,
// and its permission prompt becomes a Slack approval whose click answers it.
func TestClaudeCodeChannel(t *testing.T) {
	dir := os.Getenv("SIGNALGATE_MCP_INTEROP")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "interop", "mcp")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("MCP interop harness not installed (run .ci/mcp-interop.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	api := webapitest.New(t)
	tmp := t.TempDir()
	port := freePort(t)
	e := &channelEnv{t: t, addr: fmt.Sprintf("127.0.0.1:%d", port), slack: api, cfg: filepath.Join(tmp, "config.yaml")}
	require.NoError(t, os.WriteFile(e.cfg, fmt.Appendf(nil, `
server: { listen: %q, shutdown_grace: 2s }
storage: { driver: sqlite, dsn: %q }
log: { level: warn, format: json }
replies: { lease: 2s, poll_interval: 300ms }
agents:
  - { id: coder, token: %s, target: { kind: stream } }
connectors:
  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]
routes:
  - name: dms
    match: { source: slack }
    thread: { agent: coder, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" }
    priority: urgent
approvals:
  slack_connector: acme
  approvers: [ U0JANE ]
`, e.addr, filepath.Join(tmp, "gw.db"), channelToken, approvalSigning, api.APIURL()), 0o600))
	e.gw = startGateway(t, e.cfg)

	cmd := exec.Command(node, "channel.mjs", gatewayBinary(t), "channel",
		"--agent", "coder", "--resource", "slack:T0001", "--thread", "dm:U0JANE", "--after", "0", "--log-level", "debug")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SIGNALGATE_URL=http://"+e.addr, "SIGNALGATE_AGENT_TOKEN="+channelToken)
	stderr := &gatewaytest.LockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &channelClient{t: t, stdin: stdin, lines: make(chan map[string]any, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
	}()
	t.Cleanup(func() {
		c.send(map[string]any{"cmd": "close"})
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Logf("client: %v\n%s", err, stderr.String())
		}
		if t.Failed() {
			t.Logf("client and channel stderr:\n%s\ngateway stderr:\n%s", stderr.String(), e.gw.stderr.String())
		}
	})

	ready := c.next("ready")
	exp := ready["capabilities"].(map[string]any)["experimental"].(map[string]any)
	require.Contains(t, exp, "claude/channel")
	require.Contains(t, exp, "claude/channel/permission")
	require.Contains(t, ready["instructions"], "reply tool")

	// Each DM once and in order, across a gateway crash and restart: the DMs after the
	// restart reach the log while the channel may still be waiting to reconnect.
	got := []string{}
	receive := func(n int) {
		t.Helper()
		for range n {
			p := c.next("channel")["params"].(map[string]any)
			meta := p["meta"].(map[string]any)
			require.Equal(t, "slack", meta["signal_source"])
			require.Equal(t, "urgent", meta["priority"])
			require.NotEmpty(t, meta["signal_id"])
			var to map[string]any
			require.NoError(t, json.Unmarshal([]byte(meta["replyTo"].(string)), &to), "replyTo is the reply tool's argument, as JSON")
			require.Equal(t, "D0JANE", to["channel"])
			m := regexp.MustCompile(`message (\d+)`).FindStringSubmatch(p["content"].(string))
			require.NotNil(t, m, "%s", p["content"])
			got = append(got, m[1])
		}
	}
	// One at a time: DMs of one conversation that wait together are coalesced into one
	// notification, as the policy wants.
	e.dm("U0JANE", "D0JANE", "1700000100.000100", "message 1")
	receive(1)
	e.dm("U0JANE", "D0JANE", "1700000101.000100", "message 2")
	receive(1)
	require.Equal(t, []string{"1", "2"}, got)

	e.gw.kill()
	e.gw = startGateway(t, e.cfg)
	e.dm("U0JANE", "D0JANE", "1700000102.000100", "message 3")
	receive(1)
	e.dm("U0JANE", "D0JANE", "1700000103.000100", "message 4")
	receive(1)
	require.Equal(t, []string{"1", "2", "3", "4"}, got, "in order, none twice, none lost")

	// The reply tool answers in the DM, once, however often it is called.
	c.send(map[string]any{"cmd": "tools"})
	names := []string{}
	for _, tl := range c.next("tools")["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	require.Subset(t, names, []string{"notification-inbox", "reply", "reply_status", "watch"})
	for range 2 {
		c.send(map[string]any{"cmd": "call", "name": "reply", "arguments": map[string]any{"id": "cc-answer-1", "text": "On it, Jane."}})
		res := c.next("result")["result"].(map[string]any)
		require.NotEqual(t, true, res["isError"], "%v", res)
		reply := res["structuredContent"].(map[string]any)
		require.Equal(t, "cc-answer-1", reply["id"])
		require.Equal(t, "D0JANE", reply["replyTo"].(map[string]any)["channel"], "where the channel's thread was last written to")
	}
	post := e.call("chat.postMessage")
	require.Equal(t, "D0JANE", post.Form.Get("channel"))
	require.Contains(t, post.Form.Get("text"), "On it, Jane.")

	// A permission prompt becomes an approval in Slack; Jane's click answers it.
	c.send(map[string]any{"cmd": "permission_request", "params": map[string]any{
		"request_id": "abcde", "tool_name": "Bash", "description": "Run the deploy script", "input_preview": `{"command":"./deploy.sh"}`}})
	ask := e.call("chat.postMessage")
	require.NotContains(t, ask.Form.Get("text"), "On it, Jane.", "the reply was posted once")
	require.Equal(t, "D0JANE", ask.Form.Get("channel"))
	m := regexp.MustCompile(`"value":"([^"]+)"`).FindStringSubmatch(ask.Form.Get("blocks"))
	require.NotNil(t, m, "%s", ask.Form.Get("blocks"))
	code, out := e.post("/webhooks/slack/acme/interactions", "application/x-www-form-urlencoded", webapitest.BlockActions(webapitest.Click{
		ActionID: slack.ActionApprove, Value: m[1], UserID: "U0JANE", UserName: "jane", Channel: "D0JANE", MessageTS: ask.TS}))
	require.Equal(t, http.StatusOK, code, out)
	v := c.next("permission")
	require.Equal(t, map[string]any{"request_id": "abcde", "behavior": "allow"}, v["params"])

	// Nothing arrived twice meanwhile: the next DM is the next notification.
	e.dm("U0JANE", "D0JANE", "1700000104.000100", "message 5")
	receive(1)
	require.Equal(t, []string{"1", "2", "3", "4", "5"}, got)
}
