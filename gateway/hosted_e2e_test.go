package gateway

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/session/sessiontest"
)

const hostedWebhookSecret = "whsec_c2lnbmFsZ2F0ZS10ZXN0LXdlYmhvb2stc2VjcmV0ISE="

// TestHostedSessionsEndToEnd runs a gateway with the real store (SQLite and PostgreSQL)
// against a fake of each hosted session API (whose requests the vendor libraries'
// recorded ones pin, in the targets' own tests): a check_run failure wakes an idle
// session, a second steers the busy one, the idle webhook releases the held
// notification, the session is created once and used again after a restart, an action
// required is an approval in Slack whose click answers the session, and a message whose
// answer was lost reaches the session once.
func TestHostedSessionsEndToEnd(t *testing.T) {
	for _, v := range []struct{ kind, vendor string }{{"openai-agents", sessiontest.OpenAI}, {"claude-agents", sessiontest.Anthropic}} {
		t.Run(v.kind, func(t *testing.T) {
			for _, b := range storetest.Backends(t) {
				t.Run(b.Name, func(t *testing.T) { hostedE2E(t, v.kind, v.vendor, b) })
			}
		})
	}
}

func hostedE2E(t *testing.T, kind, vendor string, b storetest.Backend) {
	fake := sessiontest.NewFake(t, vendor)
	api := webapitest.New(t)
	port := freePort(t)
	env := ""
	if kind == "claude-agents" {
		env = "beta: managed-agents-2026-04-01\n"
	}
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:%[1]d", shutdown_grace: 2s }
storage: { driver: %[2]s, dsn: %[3]q }
agents:
  - id: support
    token: %[4]s
    target:
      kind: %[5]s
      api_key: sk-test-signalgate
      base_url: %[6]q
      agent_id: agent_fake
      environment_id: env_fake
      webhook_secret: %[7]q
      timeout: 2s
      poll_interval: 1m
      %[8]s
routes:
  - name: ci
    match: { source: github, connector: acme }
    thread: { agent: support, resource: acme/api, thread: ci }
connectors:
  github: [ { name: acme, secret: %[9]q } ]
  slack: [ { name: acme, signing_secret: %[10]q, bot_token: xoxb-test-token, api_url: %[11]q } ]
approvals: { slack_connector: acme, channel: C0APPROVE, approvers: [ U0JANE ] }
`, port, b.Config.Driver, b.Config.DSN, lgToken, kind, fake.BaseURL(), hostedWebhookSecret, env, watchGitHubSecret, approvalSigning, api.APIURL())
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "ci"}
	m, stop := startHosted(t, path)
	gw := "http://" + m.Addr().String()
	hook := gw + "/targets/" + kind + "/support/webhook"
	frames := followThread(t, gw, lgToken, k)

	// An idle thread: the failure creates the session and starts its turn.
	code, out := sendGitHub(t, gw, checkRunFailure(t, "lint"), "check_run", "hosted-1-"+kind+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	wake := frames.signal(t)
	require.Equal(t, "wake", wake.Action)
	msg := nextMessage(t, fake)
	require.Equal(t, wake.XML, msg.Text, "the signal's XML is the message")
	if vendor == sessiontest.OpenAI {
		require.Equal(t, wake.Signal, msg.Key, "the Idempotency-Key is the signal's id")
	}
	ids, metas := fake.Sessions()
	require.Len(t, ids, 1)
	require.Equal(t, map[string]string{"signalgate_agent": "support", "signalgate_resource": "acme/api", "signalgate_thread": "ci"}, metas[0])
	sid := ids[0]
	require.Equal(t, http.StatusNoContent, fake.Webhook(t, hook, hostedWebhookSecret, sessiontest.HookBusy, sid))

	// Busy: the second failure's summary steers the running turn; its full notification
	// is held until the session is idle.
	code, out = sendGitHub(t, gw, checkRunFailure(t, "unit tests"), "check_run", "hosted-2-"+kind+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	summary := frames.signal(t)
	require.Equal(t, agent.TagNotificationSummary, summary.TagName)
	require.Equal(t, "deliver", summary.Action)
	require.Equal(t, summary.XML, nextMessage(t, fake).Text, "a message to the busy session steers its turn")

	// The idle webhook closes the run; the held notification wakes the session again.
	fake.Finish(sid, "lint fixed")
	require.Equal(t, http.StatusNoContent, fake.Webhook(t, hook, hostedWebhookSecret, sessiontest.HookIdle, sid))
	require.Equal(t, agent.RunFinished, frames.runClosed(t, wake.RunID))
	held := frames.signal(t)
	require.Equal(t, "wake", held.Action)
	require.Contains(t, held.XML, "unit tests")
	require.Equal(t, held.XML, nextMessage(t, fake).Text)
	fake.Finish(sid, "tests fixed")
	require.Equal(t, http.StatusNoContent, fake.Webhook(t, hook, hostedWebhookSecret, sessiontest.HookIdle, sid))
	require.Equal(t, agent.RunFinished, frames.runClosed(t, held.RunID))

	// A webhook the library would refuse (tampered: another secret) changes nothing.
	require.Equal(t, http.StatusUnauthorized, fake.Webhook(t, hook, "whsec_b3RoZXItc2VjcmV0LW9mLWVub3VnaC1ieXRlcw==", sessiontest.HookBusy, sid))

	// After a restart, the thread's session is the one remembered.
	frames.close()
	stop()
	m, stop = startHosted(t, path)
	defer stop()
	gw = "http://" + m.Addr().String()
	frames = followThread(t, gw, lgToken, k)
	code, out = sendGitHub(t, gw, checkRunFailure(t, "build"), "check_run", "hosted-3-"+kind+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	var third threadFrame
	for third.Action != "wake" || third.RunID == wake.RunID || third.RunID == held.RunID {
		third = frames.signal(t) // the replayed log first
	}
	msg = nextMessage(t, fake)
	require.Equal(t, third.XML, msg.Text)
	require.Equal(t, sid, msg.Session, "the remembered session")
	ids, _ = fake.Sessions()
	require.Len(t, ids, 1, "created once")

	// An action required is an approval in Slack; the approver's click answers the session.
	fake.RequireAction(sid, "req_1")
	require.Equal(t, http.StatusNoContent, fake.Webhook(t, hook, hostedWebhookSecret, sessiontest.HookAction, sid))
	post := nextSlackCall(t, api, "chat.postMessage")
	require.Equal(t, "C0APPROVE", post.Form.Get("channel"))
	as, _, err := store.NewApprovals(m.Store).ListApprovals(context.Background(), approval.Filter{Agent: "support"})
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, kind, as[0].Origin)
	require.Equal(t, "req_1", as[0].ToolCallID)
	require.Equal(t, third.RunID, as[0].RunID)
	clickApproval(t, gw, webapitest.Click{ActionID: slack.ActionApprove, Value: as[0].ID, UserID: "U0JANE", UserName: "jane",
		Channel: "C0APPROVE", MessageTS: post.TS})
	require.Equal(t, sessiontest.Answer{Session: sid, CallID: "req_1", Allow: true}, nextAnswer(t, fake))
	fake.Finish(sid, "deployed")
	require.Equal(t, http.StatusNoContent, fake.Webhook(t, hook, hostedWebhookSecret, sessiontest.HookIdle, sid))
	require.Equal(t, agent.RunFinished, frames.runClosed(t, third.RunID))

	// A message whose answer is lost (a 500 after it was taken) is retried, and the
	// session has it once: the same Idempotency-Key (openai), or found among the
	// session's events before a resend (claude).
	posts := fake.MessagePosts()
	fake.FailNext(1)
	code, out = sendGitHub(t, gw, checkRunFailure(t, "deploy"), "check_run", "hosted-4-"+kind+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	fourth := frames.signal(t)
	require.Equal(t, fourth.XML, nextMessage(t, fake).Text)
	require.Eventually(t, func() bool {
		return strings.Contains(get(t, gw+"/metrics", ""), fmt.Sprintf(`signalgate_delivery_attempts_total{outcome="delivered",target=%q} 2`, kind))
	}, waitLong, 20*time.Millisecond, "the retry is delivered")
	require.Empty(t, fake.Messages, "the session took the message once")
	if vendor == sessiontest.OpenAI {
		require.Equal(t, posts+2, fake.MessagePosts(), "the retry was posted again, with the same key")
	} else {
		require.Equal(t, posts+1, fake.MessagePosts(), "the retry found the message and posted nothing")
	}
}

// startHosted runs a gateway in process on the config at path; stop closes it.
func startHosted(t *testing.T, path string) (*Gateway, func()) {
	t.Helper()
	c, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(c, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			require.NoError(t, m.Close())
		}
	}
	t.Cleanup(stop)
	return m, stop
}

func nextMessage(t *testing.T, f *sessiontest.Fake) sessiontest.Message {
	t.Helper()
	select {
	case m := <-f.Messages:
		return m
	case <-time.After(waitLong): // only bounds a broken test
		t.Fatal("no message reached the session")
		return sessiontest.Message{}
	}
}

func nextAnswer(t *testing.T, f *sessiontest.Fake) sessiontest.Answer {
	t.Helper()
	select {
	case a := <-f.Answers:
		return a
	case <-time.After(waitLong):
		t.Fatal("no answer reached the session")
		return sessiontest.Answer{}
	}
}

// clickApproval posts a Slack button click, signed for acme.
func clickApproval(t *testing.T, gw string, c webapitest.Click) {
	t.Helper()
	body := webapitest.BlockActions(c)
	req, err := http.NewRequest(http.MethodPost, gw+"/webhooks/slack/acme/interactions", bytes.NewReader(body))
	require.NoError(t, err)
	now := time.Now().Unix()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(slack.HeaderTimestamp, fmt.Sprint(now))
	req.Header.Set(slack.HeaderSignature, webapitest.Sign(approvalSigning, now, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
