package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/langgraph"
	"github.com/signalgate/signalgate/targets/langgraph/langgraphtest"
)

const (
	lgToken         = "support-token-0123456789"
	lgCallbackToken = "langgraph-callback-token-0123"
)

// TestLangGraphEndToEnd runs real gateways (in process, and as a process it SIGKILLs)
// with the real store against the real LangGraph Agent Server (interop/langgraph), one
// server process for every case.
func TestLangGraphEndToEnd(t *testing.T) {
	base := langgraphtest.Server(t)

	t.Run("a check_run failure wakes an idle thread, a second follows busy, the held one goes at the run's end", func(t *testing.T) {
		t.Parallel()
		for _, b := range storetest.Backends(t) {
			t.Run(b.Name, func(t *testing.T) { lgWake(t, base, b) })
		}
	})

	t.Run("an interrupt is a Slack question; the approver's reply resumes the run", func(t *testing.T) {
		t.Parallel()
		for _, b := range storetest.Backends(t) {
			t.Run(b.Name, func(t *testing.T) { lgInterrupt(t, base, b) })
		}
	})

	t.Run("a gateway SIGKILLed during a run loses nothing", func(t *testing.T) {
		t.Parallel()
		for _, b := range storetest.Backends(t) {
			t.Run(b.Name, func(t *testing.T) { lgCrash(t, base, b) })
		}
	})
}

// lgWake: a check_run failure wakes an idle thread (one run, the signal's XML its input),
// a second while the run is live follows busy, and the held notification goes at the
// run's end. Each backend has its own LangGraph thread on the shared server.
func lgWake(t *testing.T, base string, b storetest.Backend) {
	begun := nodeStarts(t)
	port := freePort(t)
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "ci-" + b.Name}
	cfg := lgConfigOn(t, b.Config, port, base, begun.url, "")
	cfg = strings.Replace(cfg, "delay_ms: 1000", "delay_ms: 0", 1) // begun holds the runs
	m := startLangGraphMain(t, strings.ReplaceAll(cfg, "thread: ci }", "thread: "+k.Thread+" }"))
	gw := "http://" + m.Addr().String()
	frames := followThread(t, gw, lgToken, k)

	first := checkRunFailure(t, "lint")
	code, out := sendGitHub(t, gw, first, "check_run", "lg-e2e-1-"+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	wake := frames.signal(t)
	require.Equal(t, "wake", wake.Action)
	begun.wait(t, "lint")
	runs := lgRuns(t, base, k)
	require.Len(t, runs, 1, "one event, one LangGraph run")
	require.Equal(t, wake.XML, runs[0].userContent(t), "the signal's XML is the run's input")

	// While it runs: the second failure (high) is a summary now, delivered with busy's
	// strategy for high (enqueue), and the full notification when the thread is idle.
	code, out = sendGitHub(t, gw, checkRunFailure(t, "unit tests"), "check_run", "lg-e2e-2-"+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	summary := frames.signal(t)
	require.Equal(t, agent.TagNotificationSummary, summary.TagName)
	require.Equal(t, "deliver", summary.Action)
	runs = lgRuns(t, base, k)
	require.Len(t, runs, 2)
	require.Equal(t, langgraph.Enqueue, runs[1].MultitaskStrategy)
	require.Equal(t, summary.XML, runs[1].userContent(t))

	begun.release() // the first run ends, then the summary's
	require.Equal(t, agent.RunFinished, frames.runClosed(t, wake.RunID), "the runs' end closes the thread's run")
	held := frames.signal(t)
	require.Equal(t, "wake", held.Action, "the held notification wakes the idle thread")
	require.Contains(t, held.XML, "unit tests")
	require.NotEqual(t, wake.RunID, held.RunID)
	require.Equal(t, agent.RunFinished, frames.runClosed(t, held.RunID))
	runs = lgRuns(t, base, k)
	require.Len(t, runs, 3)
	require.Equal(t, held.XML, runs[2].userContent(t))
	metrics := get(t, gw+"/metrics", "")
	require.Contains(t, metrics, `signalgate_signals_sent_total{action="wake",target="langgraph"} 2`, "metrics per target")
	require.Contains(t, metrics, `signalgate_signals_sent_total{action="deliver",target="langgraph"} 1`)
	require.Contains(t, metrics, `signalgate_delivery_attempts_total{outcome="delivered",target="langgraph"} 3`)
}

// lgInterrupt: a graph's interrupt() is a Slack question; the approver's reply resumes
// the run with command.resume.
func lgInterrupt(t *testing.T, base string, b storetest.Backend) {
	api := webapitest.New(t)
	port := freePort(t)
	m := startLangGraphMain(t, lgConfigOn(t, b.Config, port, base, "", fmt.Sprintf(`  slack: [ { name: acme, signing_secret: %q, bot_token: xoxb-test-token, api_url: %q } ]
approvals: { slack_connector: acme, channel: C0APPROVE, approvers: [ U0JANE ] }
`, approvalSigning, api.APIURL())))
	gw := "http://" + m.Addr().String()
	k := inbox.ThreadKey{Agent: "support", Resource: "ops", Thread: "deploys-" + b.Name}
	frames := followThread(t, gw, lgToken, k)
	notify(t, gw, k, "Deploy to production? ask-user")
	wake := frames.signal(t)

	post := nextSlackCall(t, api, "chat.postMessage")
	require.Equal(t, "C0APPROVE", post.Form.Get("channel"))
	require.Contains(t, post.Form.Get("text"), "ask-user", "the interrupt's question is asked")
	// A threaded reply finds its question by the posted message's ts, which the gateway
	// records once Slack has answered the post: wait for that record, as a person's reply
	// always does.
	var as []approval.Approval
	require.Eventually(t, func() bool {
		var err error
		as, _, err = store.NewApprovals(m.Store).ListApprovals(context.Background(), approval.Filter{Agent: "support"})
		require.NoError(t, err)
		return len(as) == 1 && as[0].MessageTS == post.TS
	}, waitLong, 10*time.Millisecond, "the question's Slack message is recorded")
	require.Equal(t, approval.OriginLangGraph, as[0].Origin)
	require.Equal(t, approval.KindQuestion, as[0].Kind)
	require.Equal(t, wake.RunID, as[0].RunID)

	slackReply(t, gw, "C0APPROVE", post.TS, "1700000100.000100", "U0JANE", "yes, ship it")
	require.Equal(t, agent.RunFinished, frames.runClosed(t, wake.RunID), "the resumed run's end closes the thread's run")
	th := lgThreadOf(t, base, k)
	require.Equal(t, "idle", th.Status)
	last := th.Values.Messages[len(th.Values.Messages)-1]
	require.Equal(t, "ai", last.Type)
	require.JSONEq(t, `"answer: yes, ship it"`, string(last.Content))
	a, err := store.NewApprovals(m.Store).GetApproval(context.Background(), as[0].ID)
	require.NoError(t, err)
	require.Equal(t, approval.StatusAnswered, a.Status)
}

// lgCrash SIGKILLs a gateway process while LangGraph runs what it delivered, and
// restarts it on the same database.
func lgCrash(t *testing.T, base string, b storetest.Backend) {
	begun := nodeStarts(t)
	port := freePort(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "crash-" + b.Name}
	cfg := lgConfigOn(t, b.Config, port, base, begun.url, "log: { level: warn }\n")
	cfg = strings.Replace(cfg, "delay_ms: 1000", "delay_ms: 0", 1) // begun holds the runs
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(cfg, "thread: ci", "thread: "+k.Thread)), 0o600))
	p := startGateway(t, path)
	frames := followThread(t, p.url, lgToken, k)

	code, out := sendGitHub(t, p.url, checkRunFailure(t, "lint"), "check_run", "lg-crash-1-"+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	wake := frames.signal(t)
	begun.wait(t, "lint")
	code, out = sendGitHub(t, p.url, checkRunFailure(t, "unit tests"), "check_run", "lg-crash-2-"+b.Name)
	require.Equal(t, http.StatusOK, code, out)
	summary := frames.signal(t)
	require.Equal(t, agent.TagNotificationSummary, summary.TagName)
	frames.close()

	// Killed while LangGraph runs: the first run's webhook finds nobody (the harness
	// replaces the worker a refused delivery kills) before the enqueued summary's run
	// begins, and the thread's run stays open in the database.
	p.kill()
	begun.release()
	begun.wait(t, "notification-summary")
	p = startGateway(t, path)
	frames = followThread(t, p.url, lgToken, k) // replays the log from its start
	require.Equal(t, wake.Signal, frames.signal(t).Signal)
	require.Equal(t, summary.Signal, frames.signal(t).Signal)
	// The restarted gateway reads the thread with an open run and, once LangGraph is
	// idle, closes it; the held notification then wakes the thread.
	require.Equal(t, agent.RunFinished, frames.runClosed(t, wake.RunID))
	held := frames.signal(t)
	require.Equal(t, "wake", held.Action)
	require.Contains(t, held.XML, "unit tests")
	require.Equal(t, agent.RunFinished, frames.runClosed(t, held.RunID))

	// Every signal reached LangGraph once: the two wakes and the summary, in order.
	var inputs []string
	for _, r := range lgRuns(t, base, k) {
		inputs = append(inputs, r.userContent(t))
	}
	require.Equal(t, []string{wake.XML, summary.XML, held.XML}, inputs)
}

// lgConfigOn is a gateway on port and storage st sending GitHub's CI to a langgraph agent
// on base; extra continues its connectors section (more connectors, then more sections).
func lgConfigOn(t *testing.T, st store.Config, port int, base, startedURL, extra string) string {
	t.Helper()
	started := ""
	if startedURL != "" {
		started = fmt.Sprintf(", started_url: %q", startedURL)
	}
	return fmt.Sprintf(`
server: { listen: "127.0.0.1:%[1]d", shutdown_grace: 2s }
storage: { driver: %[9]s, dsn: %[2]q }
agents:
  - id: support
    token: %[3]s
    target:
      kind: langgraph
      url: %[4]q
      assistant_id: echo
      timeout: 2s
      poll_interval: 1s
      callback_url: "http://127.0.0.1:%[1]d"
      callback_token: %[5]q
      context: { delay_ms: 1000%[6]s }
routes:
  - name: ci
    match: { source: github, connector: acme }
    thread: { agent: support, resource: acme/api, thread: ci }
connectors:
  github: [ { name: acme, secret: %[7]q } ]
%[8]s`, port, st.DSN, lgToken, base, lgCallbackToken, started, watchGitHubSecret, extra, st.Driver)
}

// startLangGraphMain runs a gateway in process on cfg.
func startLangGraphMain(t *testing.T, cfg string) *Gateway {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	c, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(c, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// notify creates a notification through the agent API.
func notify(t *testing.T, gw string, k inbox.ThreadKey, summary string) {
	t.Helper()
	body := jsonOf(t, map[string]any{"kind": "deploy", "summary": summary, "priority": "urgent"})
	req, err := http.NewRequest(http.MethodPost, gw+"/v1/agents/"+k.Agent+"/threads/"+url.PathEscape(k.Resource)+"/"+url.PathEscape(k.Thread)+"/notifications", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+lgToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

// starts receives the graph nodes' announcements (context.started_url) and holds every
// node in its announcement until release: a run stays live for as long as the test needs
// it, whatever the machine's speed (the graph awaits the announcement's answer).
type starts struct {
	url     string
	texts   chan string
	release func()
}

func nodeStarts(t *testing.T) *starts {
	s := &starts{texts: make(chan string, 32)}
	released := make(chan struct{})
	var once sync.Once
	s.release = func() { once.Do(func() { close(released) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.texts <- body.Text
		select {
		case <-released:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(s.release) // before the server closes: Close waits for held requests
	s.url = srv.URL
	return s
}

// wait waits until a node began on a message containing text.
func (s *starts) wait(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case got := <-s.texts:
			if strings.Contains(got, text) {
				return
			}
		case <-deadline:
			t.Fatalf("no run began on %q", text)
		}
	}
}

// lgRunInfo is a LangGraph run as the server lists it.
type lgRunInfo struct {
	RunID             string `json:"run_id"`
	Status            string `json:"status"`
	MultitaskStrategy string `json:"multitask_strategy"`
	Kwargs            struct {
		Input struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"input"`
	} `json:"kwargs"`
}

func (r lgRunInfo) userContent(t *testing.T) string {
	t.Helper()
	require.Len(t, r.Kwargs.Input.Messages, 1, "run %s", r.RunID)
	return r.Kwargs.Input.Messages[0].Content
}

// lgRuns lists k's LangGraph runs, oldest first (the JS server's order).
func lgRuns(t *testing.T, base string, k inbox.ThreadKey) []lgRunInfo {
	t.Helper()
	var out []lgRunInfo
	getLangGraph(t, base, "/threads/"+langgraph.ThreadID(k)+"/runs?limit=100", &out)
	return out
}

type lgThreadInfo struct {
	Status string `json:"status"`
	Values struct {
		Messages []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	} `json:"values"`
}

func lgThreadOf(t *testing.T, base string, k inbox.ThreadKey) lgThreadInfo {
	t.Helper()
	var out lgThreadInfo
	getLangGraph(t, base, "/threads/"+langgraph.ThreadID(k), &out)
	return out
}

func getLangGraph(t *testing.T, base, path string, out any) {
	t.Helper()
	resp, err := http.Get(base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}
