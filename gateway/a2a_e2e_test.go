package gateway

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/a2a"
	"github.com/signalgate/signalgate/targets/a2a/a2atest"
)

// a2aHarness is the test binary's one A2A server (@a2a-js/sdk), closed by TestMain.
var a2aHarness a2atest.Shared

const (
	a2aToken    = "helper-token-0123456789"
	a2aGHSecret = "gh-a2a-secret-0123456789"
)

const a2aSlackSigning = "a2a-slack-signing-0123456789abcd"

// postCheckRun signs and posts a check_run delivery to the gateway at base.
func postCheckRun(t *testing.T, base, delivery string, body []byte) {
	t.Helper()
	code, out := sendGitHubSigned(t, base, a2aGHSecret, body, "check_run", delivery)
	require.Equal(t, http.StatusOK, code, out)
}

// startA2AGateway runs a gateway in process on the config at path, logging to log.
func startA2AGateway(t *testing.T, path string, log *slog.Logger) *Gateway {
	t.Helper()
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, log)
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// a2aProtocols are the harness's agent paths by the protocol version their cards
// declare.
var a2aProtocols = []struct{ name, prefix string }{{"v1.0", ""}, {"v0.3", "v03/"}}

// a2aConfig is a gateway on port whose agent helper is the harness's agent at agentURL,
// woken by GitHub check runs (urgent, thread in the repository's resource); push
// notifications come back to the gateway itself. A killed process's thread leases lapse
// after 2s (on PostgreSQL; SQLite takes them back at start).
func a2aConfig(t *testing.T, dir string, port int, st store.Config, agentURL, thread, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`server: { listen: "127.0.0.1:%d", shutdown_grace: 2s }
storage: { driver: %s, dsn: %q }
log: { level: debug, format: json }
dispatch: { lease: 2s }
agents:
  - id: helper
    token: %s
    target: { kind: a2a, url: %q, callback_url: "http://127.0.0.1:%d", poll_interval: 1s }
connectors:
  github: [ { name: acme, secret: %q } ]
routes:
  - name: checks
    match: { source: github }
    thread: { agent: helper, resource: "{{.Repo}}", thread: %q }
    priority: urgent
%s`, port, st.Driver, st.DSN, a2aToken, agentURL, port, a2aGHSecret, thread, extra)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// logged is a slog handler that tells a test of the gateway's log lines it waits for
// (a signal held for a working task, a question asked once recorded), by message.
type logged struct {
	slog.Handler
	want map[string]chan struct{}
}

// logWatch is a logger for a gateway that writes to the test's log and signals on the
// channels of the messages given.
func logWatch(t *testing.T, msgs ...string) (*slog.Logger, map[string]chan struct{}) {
	want := map[string]chan struct{}{}
	for _, m := range msgs {
		want[m] = make(chan struct{}, 16)
	}
	return slog.New(logged{Handler: storetest.Logger(t).Handler(), want: want}), want
}

func (h logged) Enabled(context.Context, slog.Level) bool { return true }

func (h logged) Handle(ctx context.Context, r slog.Record) error {
	if c, ok := h.want[r.Message]; ok {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	if h.Handler.Enabled(ctx, r.Level) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h logged) WithAttrs(as []slog.Attr) slog.Handler {
	return logged{Handler: h.Handler.WithAttrs(as), want: h.want}
}
func (h logged) WithGroup(g string) slog.Handler {
	return logged{Handler: h.Handler.WithGroup(g), want: h.want}
}

// waitLogged waits for a log line the channel tells of.
func waitLogged(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(procWait): // only bounds a broken test
		t.Fatalf("never logged: %s", what)
	}
}

const (
	logHeld  = "held until the thread is idle"
	logAsked = "question asked"
)

// An octokit check_run failure, signed and posted, wakes the idle A2A context of its
// repository's thread: one task, the signal's XML in its message. A second failure while
// the task works is held (target.busy: wait): the agent gets nothing more, in no second
// task; once the task ends the held notification goes out as the thread's next task.
// Both protocol versions, through the whole gateway and its store, on every backend.
func TestA2AAgentWokenByACheckRunFailure(t *testing.T) {
	h := a2aHarness.Get(t)
	for _, p := range a2aProtocols {
		for _, b := range storetest.Backends(t) {
			t.Run(p.name+"/"+b.Name, func(t *testing.T) {
				dir := t.TempDir()
				thread := "checks-" + b.Name + "-" + p.name
				log, seen := logWatch(t, logHeld)
				m := startA2AGateway(t, a2aConfig(t, dir, freePort(t), b.Config, h.URL+"/"+p.prefix+"hold", thread, ""), log)
				base := "http://" + m.Addr().String()
				k := inbox.ThreadKey{Agent: "helper", Resource: "Codertocat/Hello-World", Thread: thread}
				cid := a2a.ContextID(k)
				frames := followThread(t, base, a2aToken, k)

				postCheckRun(t, base, "a2a-e2e-1-"+thread, checkRunFailure(t, ""))
				woke := frames.signal(t)
				require.Equal(t, "wake", woke.Action)
				got, err := h.Received(cid)
				require.NoError(t, err)
				require.Len(t, got, 1, "one message")
				require.Equal(t, woke.Signal, got[0].MessageID)
				require.Equal(t, woke.XML, got[0].Text(), "the signal's XML is the message's text")
				require.Contains(t, got[0].Text(), "Octocoders-linter")
				require.Equal(t, "signal", got[0].Data()["type"])

				postCheckRun(t, base, "a2a-e2e-2-"+thread, checkRunFailure(t, "Octocoders-tests"))
				waitLogged(t, seen[logHeld], "the second failure held")
				got, err = h.Received(cid)
				require.NoError(t, err)
				require.Len(t, got, 1, "nothing reaches the agent while its task works")

				require.NoError(t, h.Release(cid))
				require.Equal(t, agent.RunFinished, frames.runClosed(t, woke.RunID))
				next := frames.signal(t)
				require.Equal(t, "wake", next.Action, "the held notification wakes the idle thread")
				require.NotEqual(t, woke.RunID, next.RunID)
				require.Contains(t, next.XML, "Octocoders-tests")
				got, err = h.Received(cid)
				require.NoError(t, err)
				require.Len(t, got, 2)
				require.NotEqual(t, got[0].TaskID, got[1].TaskID, "the next task")
				require.NoError(t, h.Release(cid))
				require.Equal(t, agent.RunFinished, frames.runClosed(t, next.RunID))
				metrics := get(t, base+"/metrics", "")
				require.Contains(t, metrics, `signalgate_signals_sent_total{action="wake",target="a2a"} 2`, "metrics per target")
			})
		}
	}
}

// A Slack DM wakes an A2A agent that asks before it acts: its task's input-required is
// a question posted to the approvals channel; an approver's threaded reply goes to the
// agent as a message with the task's id, the task completes, and reply: auto posts the
// task's answer back to the DM, once. Both protocol versions, on every backend.
func TestA2AQuestionAnsweredFromSlack(t *testing.T) {
	h := a2aHarness.Get(t)
	for _, p := range a2aProtocols {
		for _, b := range storetest.Backends(t) {
			t.Run(p.name+"/"+b.Name, func(t *testing.T) {
				api := webapitest.New(t)
				dir := t.TempDir()
				dm := "dm-" + b.Name + "-" + p.name
				path := a2aConfig(t, dir, freePort(t), b.Config, h.URL+"/"+p.prefix+"ask", "checks", fmt.Sprintf(`  - name: dms
    match: { source: slack, kind: dm }
    thread: { agent: helper, resource: "slack:{{.Team}}", thread: "%s:{{.User}}" }
    priority: urgent
approvals:
  slack_connector: acme
  channel: C0APPROVE
  approvers: [ U0JANE ]
`, dm))
				raw, err := os.ReadFile(path)
				require.NoError(t, err)
				raw = bytes.Replace(raw, []byte("poll_interval: 1s }"), []byte("poll_interval: 1s, reply: auto }"), 1)
				raw = bytes.Replace(raw, []byte("  github: [ { name: acme, secret:"), []byte(fmt.Sprintf(
					"  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]\n  github: [ { name: acme, secret:",
					a2aSlackSigning, api.APIURL())), 1)
				require.NoError(t, os.WriteFile(path, raw, 0o600))
				log, seen := logWatch(t, logAsked)
				m := startA2AGateway(t, path, log)
				base := "http://" + m.Addr().String()
				k := inbox.ThreadKey{Agent: "helper", Resource: "slack:T0001", Thread: dm + ":U0ANN"}
				frames := followThread(t, base, a2aToken, k)

				require.Equal(t, http.StatusOK, postSlackEvent(t, base, a2aSlackSigning, map[string]any{"type": "message", "user": "U0ANN",
					"text": "please deploy v2", "ts": "1700000100.000100", "team": "T0001", "channel": "D0ANN", "event_ts": "1700000100.000100",
					"channel_type": "im"}, "Ev1"+dm))
				woke := frames.signal(t)
				question := nextSlackCall(t, api, "chat.postMessage")
				// The reply finds its question by the posted message's ts, recorded once Slack
				// answered the post: "question asked" is logged after that.
				waitLogged(t, seen[logAsked], "the question recorded where it was posted")
				require.Equal(t, "C0APPROVE", question.Form.Get("channel"))
				require.Contains(t, question.Form.Get("blocks")+question.Form.Get("text"), "Approve?", "the agent's question")
				approvals := store.NewApprovals(m.Store)
				page, _, err := approvals.ListApprovals(context.Background(), approval.Filter{Agent: "helper", Thread: k.Thread})
				require.NoError(t, err)
				require.Len(t, page, 1)
				require.Equal(t, approval.OriginA2A, page[0].Origin)
				require.Equal(t, approval.KindQuestion, page[0].Kind)

				// Jane answers in the question's thread, as Slack delivers a threaded reply.
				ts := fmt.Sprintf("%d.000200", time.Now().Unix()+10)
				// No route wants the reply itself (202): it answers the question all the same.
				require.Equal(t, http.StatusAccepted, postSlackEvent(t, base, a2aSlackSigning, map[string]any{"type": "message", "user": "U0JANE",
					"text": "yes, ship it", "ts": ts, "thread_ts": question.TS, "team": "T0001", "channel": "C0APPROVE", "event_ts": ts,
					"channel_type": "channel"}, "Ev2"+dm))
				require.Equal(t, agent.RunFinished, frames.runClosed(t, woke.RunID), "the answered task's end closes the run")
				answer := nextSlackCall(t, api, "chat.postMessage")
				for answer.Form.Get("channel") != "D0ANN" {
					answer = nextSlackCall(t, api, "chat.postMessage") // the question's message updated, an ephemeral note
				}
				require.Contains(t, answer.Form.Get("text"), "answer: yes, ship it", "the completed task's answer, in the DM it came from")
				got, err := h.Received(a2a.ContextID(k))
				require.NoError(t, err)
				require.Len(t, got, 2)
				require.Equal(t, got[0].TaskID, got[1].TaskID, "the answer went to the task")
				require.Equal(t, "yes, ship it", got[1].Text())
				decided, err := approvals.GetApproval(context.Background(), page[0].ID)
				require.NoError(t, err)
				require.Equal(t, approval.StatusAnswered, decided.Status)
				require.Len(t, api.Posted("D0ANN"), 1, "answered once")
			})
		}
	}
}

// A gateway SIGKILLed while the agent works a task loses nothing: the task ends while
// the gateway is down (its push notifications lost); restarted on the same data, the
// gateway follows the task again and learns of its end by asking, the run closes, the
// failure that arrived while the task worked goes out as the next task, and the agent
// got each signal once. Both protocol versions, on every backend.
func TestA2AGatewayKilledDuringATask(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a gateway process")
	}
	h := a2aHarness.Get(t)
	for _, p := range a2aProtocols {
		// Each protocol its own databases: the same delivery twice would be a redelivery.
		for _, b := range storetest.Backends(t) {
			t.Run(p.name+"/"+b.Name, func(t *testing.T) {
				dir := t.TempDir()
				thread := "killed-" + b.Name + "-" + p.name
				path := a2aConfig(t, dir, freePort(t), b.Config, h.URL+"/"+p.prefix+"hold", thread, "")
				first := startGateway(t, path)
				k := inbox.ThreadKey{Agent: "helper", Resource: "Codertocat/Hello-World", Thread: thread}
				cid := a2a.ContextID(k)
				frames := followThread(t, first.url, a2aToken, k)
				postCheckRun(t, first.url, "kill-1-"+thread, checkRunFailure(t, ""))
				woke := frames.signal(t)
				// Acknowledged: stored. The gateway dies before or after looking at it.
				postCheckRun(t, first.url, "kill-2-"+thread, checkRunFailure(t, "Octocoders-tests"))
				frames.close()
				first.kill()
				// The task ends while the gateway is down: its push notifications find no one,
				// and the agent does not send them again.
				released := time.Now()
				require.NoError(t, h.Release(cid))

				second := startGateway(t, path)
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("the restarted gateway's log:\n%s", second.stderr.String())
					}
				})
				frames = followThread(t, second.url, a2aToken, k)
				require.Equal(t, woke.Signal, frames.signal(t).Signal, "the log replays")
				require.Equal(t, agent.RunFinished, frames.runClosed(t, woke.RunID), "the restarted gateway asked (tasks/get)")
				next := frames.signal(t)
				require.Equal(t, "wake", next.Action)
				require.Contains(t, next.XML, "Octocoders-tests")
				got, err := h.Received(cid)
				require.NoError(t, err)
				require.Len(t, got, 2, "each signal once")
				require.Equal(t, woke.Signal, got[0].MessageID)
				require.Equal(t, next.Signal, got[1].MessageID)
				require.NotEqual(t, got[0].TaskID, got[1].TaskID)
				require.GreaterOrEqual(t, got[1].At, released.UnixMilli(), "the second reached the agent only once the first task was let go")
				require.NoError(t, h.Release(cid))
				require.Equal(t, agent.RunFinished, frames.runClosed(t, next.RunID))
			})
		}
	}
}
