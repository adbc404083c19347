package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/alertmanager"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/linear"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/store/storetest"
)

// The provenance that vouches for a replyTo is the kinds table's: each kind that posts
// answers names what its own connectors stamp, and every such kind names some.
func TestReplyProvenanceFromTheKindsTable(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("agents: [ { id: a, token: dev-only-a-token-0123456789 } ]\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, agent.ReplyProvenance{
		github.Source:       {github.VerifiedBy},
		slack.Source:        {slack.VerifiedBySignature, slack.VerifiedBySocketMode},
		email.Source:        {email.VerifiedBy},
		alertmanager.Source: alertmanager.VerifiedBy,
		linear.Source:       {linear.VerifiedBy},
	}, c.replyProvenance())
	for _, k := range builtinKinds() {
		row := reflect.ValueOf(k)
		if !row.FieldByName("Replier").IsNil() {
			require.NotEmpty(t, row.FieldByName("VerifiedBy").Interface(), "%s sends replies: its row says what vouches for its places", k.source())
		}
	}
}

// Everyone who is not the Slack connector tries to send the support agent's answers to
// #exec-private from the gateway's bot: the agent's token through POST …/notifications
// and MCP notify, a generic sender through its native body's metadata. The first two are
// refused naming metadata.replyTo, the sender's replyTo is dropped (its event kept); the
// agent cannot answer there, and its answer goes to the DM Slack delivered.
func TestPlantedReplyToPostsNowhere(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			api := webapitest.New(t)
			cfg, err := ParseConfig("c.yaml", fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: %s, dsn: %q }
replies: { poll_interval: 300ms }
agents: [ { id: support, token: %s } ]
connectors:
  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]
  generic: [ { name: billing, secret: %q } ]
routes:
  - name: dms
    match: { source: slack }
    thread: { agent: support, resource: "slack:{{.Team}}", thread: "dm:{{.User}}" }
  - name: billing
    match: { source: generic }
    thread: { agent: support, resource: "slack:T0001", thread: "dm:U0JANE" }
`, b.Config.Driver, b.Config.DSN, replyToken, replySigning, api.APIURL(), billingSecret), noEnv)
			require.NoError(t, err)
			m := New(cfg, storetest.Logger(t))
			require.NoError(t, m.Open(context.Background()))
			t.Cleanup(func() { require.NoError(t, m.Close()) })
			base := "http://" + m.Addr().String()
			thread := base + "/v1/agents/support/threads/" + url.PathEscape("slack:T0001") + "/" + url.PathEscape("dm:U0JANE")
			exec := map[string]any{"source": "slack", "connector": "acme", "channel": "C0EXECPRIV"}

			code, out := postSlack(t, base, slackEvent(t, "Ev01", map[string]any{"type": "message", "user": "U0JANE",
				"text": "is the build green?", "ts": "1700000000.000100", "team": "T0001", "channel": "D0JANE",
				"event_ts": "1700000000.000100", "channel_type": "im"}))
			require.Equal(t, http.StatusOK, code, out)

			var refusal struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			require.Equal(t, http.StatusBadRequest, agentCall(t, http.MethodPost, thread+"/notifications",
				map[string]any{"kind": "note", "summary": "x", "metadata": map[string]any{"replyTo": exec}}, &refusal))
			require.Contains(t, refusal.Error.Message, "metadata.replyTo")

			cs, err := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(replyToken)}, MaxRetries: -1}, nil)
			require.NoError(t, err)
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{
				"resourceId": "slack:T0001", "threadId": "dm:U0JANE", "kind": "note", "summary": "x", "metadata": map[string]any{"replyTo": exec}}})
			require.NoError(t, err)
			require.True(t, res.IsError, "MCP notify takes no metadata")

			native, err := json.Marshal(map[string]any{"kind": "invoice.paid", "summary": "paid", "metadata": map[string]any{"replyTo": exec, "trace": "t1"}})
			require.NoError(t, err)
			status, ack := postGeneric(t, m, "msg_planted", native, true)
			require.Equal(t, http.StatusOK, status, "%v", ack)
			require.Equal(t, "routed", ack["status"], "the event is stored and routed")

			var page struct {
				Notifications []struct {
					Source   string         `json:"source"`
					Metadata map[string]any `json:"metadata"`
				} `json:"notifications"`
			}
			require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, thread+"/notifications?status=all", nil, &page))
			require.Len(t, page.Notifications, 2, "the DM and the sender's event")
			for _, n := range page.Notifications {
				if n.Source == "generic" {
					require.NotContains(t, n.Metadata, "replyTo", "the sender's replyTo was dropped")
					require.Equal(t, "t1", n.Metadata["trace"], "the rest of its metadata kept")
				}
			}

			require.Equal(t, http.StatusBadRequest, agentCall(t, http.MethodPost, thread+"/replies",
				map[string]any{"id": "to-exec", "text": "secrets", "replyTo": exec}, &refusal))
			require.Equal(t, "unknown_reply_to", refusal.Error.Code)
			var accepted map[string]any
			require.Equal(t, http.StatusAccepted, agentCall(t, http.MethodPost, thread+"/replies",
				map[string]any{"id": "answer-1", "text": "yes"}, &accepted))
			var posted webapitest.Call
			for posted.Method != "chat.postMessage" {
				select {
				case posted = <-api.Calls:
				case <-time.After(procWait):
					t.Fatal("no chat.postMessage")
				}
			}
			require.Equal(t, "D0JANE", posted.Form.Get("channel"))
			require.Empty(t, api.Posted("C0EXECPRIV"))
		})
	}
}
