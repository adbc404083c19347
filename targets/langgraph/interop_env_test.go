package langgraph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/langgraph"
)

// waitLong only bounds a broken test.
const waitLong = 60 * time.Second

// lgEnv is a gateway half (store, dispatcher, presence) delivering to a real LangGraph
// server through the langgraph target, its follower serving the runs' webhooks.
type lgEnv struct {
	t        *testing.T
	base     string // the LangGraph server
	env      *deliverytest.Env
	follower *langgraph.Follower
	client   *langgraph.Client
	cfg      agent.Config
	asks     *fakeQuestions
	replies  *fakeReplies
	hooks    *httptest.Server // the gateway's webhook endpoint
	// begun receives the text of each graph node that began (context.started_url).
	begun chan string
	// release lets the nodes envOptions.hold holds go on (and every later one).
	release func()
}

// envOptions vary an lgEnv.
type envOptions struct {
	settings  langgraph.Config // url, callback_url and callback_token are filled in
	noWebhook bool             // polling alone
	// hold keeps every graph node in its announcement until release: a run stays live for
	// as long as the test needs it, whatever the machine's speed.
	hold    bool
	reply   string
	backend *storetest.Backend
	policy  inbox.PolicyConfig
	lease   time.Duration
}

func newEnv(t *testing.T, base string, o envOptions) *lgEnv {
	t.Helper()
	e := &lgEnv{t: t, base: base, asks: &fakeQuestions{asked: make(chan question, 16)},
		replies: &fakeReplies{queued: make(chan reply.Request, 16)}}
	// The webhook endpoint exists before the follower that serves it.
	var mu sync.Mutex
	var router *echo.Echo
	e.hooks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := router
		mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(e.hooks.Close)
	e.begun = make(chan string, 64)
	released := make(chan struct{})
	var once sync.Once
	e.release = func() { once.Do(func() { close(released) }) }
	announced := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		e.begun <- body.Text
		if o.hold {
			select {
			case <-released:
			case <-r.Context().Done(): // the run was cancelled
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(announced.Close)
	t.Cleanup(e.release) // before the server closes: Close waits for held requests
	s := o.settings
	ctxOpts := map[string]any{"started_url": announced.URL}
	for k, v := range s.Context {
		ctxOpts[k] = v
	}
	s.Context = ctxOpts
	s.URL = base
	if s.AssistantID == "" {
		s.AssistantID = "echo"
	}
	if !o.noWebhook {
		s.CallbackURL, s.CallbackToken = e.hooks.URL, "callback-token-0123456789"
	}
	e.cfg = langgraph.Agent("support", s)
	e.cfg.Token = deliverytest.SupportToken
	e.cfg.Target.Timeout = 10 * time.Second
	e.cfg.Target.Reply = o.reply
	e.cfg.RunLease = o.lease
	e.client = langgraph.NewClient([]agent.Config{e.cfg}, nil)
	e.env = deliverytest.New(t, deliverytest.Config{Recovery: map[string]delivery.RecoveryRule{langgraph.Kind: langgraph.Recovery},
		RealClock: true, Backend: o.backend, Policy: o.policy, Agents: []agent.Config{e.cfg}, Aborter: e.client,
		EnvRoutes: func(env *deliverytest.Env) map[string]delivery.Route {
			e.follower = langgraph.NewFollower(e.cfg, env.Runs, env.Notify, service.Base{Logger: storetest.Logger(t)},
				langgraph.WithQuestions(e.asks), langgraph.WithReplies(e.replies))
			e.follower.TestSignals.Checked.Init()
			e.follower.TestSignals.Webhook.Init()
			tg, err := langgraph.New(e.follower)
			require.NoError(t, err)
			return map[string]delivery.Route{"support": delivery.RouteOf(e.cfg, tg)}
		},
	})
	r := echo.New()
	e.follower.Mount(r)
	mu.Lock()
	router = r
	mu.Unlock()
	ctx := context.Background()
	e.env.Dispatcher.TestSignals.Pass.Init()
	require.NoError(t, e.follower.Start(ctx))
	t.Cleanup(func() { _ = e.follower.Stop(context.Background()) })
	require.NoError(t, e.env.Dispatcher.Start(ctx))
	return e
}

// begins waits until a graph node begins on a message containing text.
func (e *lgEnv) begins(text string) {
	e.t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case got := <-e.begun:
			if strings.Contains(got, text) {
				return
			}
		case <-timeout:
			e.t.Fatalf("no run began on %q", text)
		}
	}
}

// note ingests a notification as a connector would.
func (e *lgEnv) note(k inbox.ThreadKey, p inbox.Priority, summary string) string {
	return e.env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "check-failed", Priority: p, Summary: summary})
}

// signals are the thread's logged signals.
func (e *lgEnv) signals(k inbox.ThreadKey) []agent.Frame {
	var out []agent.Frame
	for _, f := range e.env.Log(k) {
		if f.Event == agent.EventSignal {
			out = append(out, f)
		}
	}
	return out
}

// waitLog waits until ok holds of the thread's log (each commit publishes to the broker).
func (e *lgEnv) waitLog(k inbox.ThreadKey, what string, ok func([]agent.Frame) bool) []agent.Frame {
	e.t.Helper()
	wake, unsubscribe := e.env.Broker.Subscribe(k)
	defer unsubscribe()
	timeout := time.After(waitLong)
	for {
		if log := e.env.Log(k); ok(log) {
			return log
		}
		select {
		case <-wake:
		case <-timeout:
			e.t.Fatalf("thread %s: never %s", k, what)
		}
	}
}

// waitSignals waits until the thread's log holds n signals and returns them.
func (e *lgEnv) waitSignals(k inbox.ThreadKey, n int) []agent.Frame {
	e.t.Helper()
	e.waitLog(k, "logged enough signals", func([]agent.Frame) bool { return len(e.signals(k)) >= n })
	return e.signals(k)
}

// waitClosed waits until gateway run runID of k is closed and returns its status.
func (e *lgEnv) waitClosed(k inbox.ThreadKey, runID string) string {
	e.t.Helper()
	var status string
	e.waitLog(k, "closed run "+runID, func(log []agent.Frame) bool {
		for _, f := range log {
			if f.Event == agent.EventRun && f.RunID == runID && f.RunStatus != agent.RunOpen {
				status = f.RunStatus
				return true
			}
		}
		return false
	})
	return status
}

// waitRecord waits until ok holds of record id, looking after each dispatcher pass.
func (e *lgEnv) waitRecord(id string, ok func(inbox.Record) bool) inbox.Record {
	e.t.Helper()
	timeout := time.After(waitLong)
	for {
		r := e.env.Record(id)
		if ok(r) {
			return r
		}
		select {
		case <-e.env.Dispatcher.TestSignals.Pass.C():
		case <-timeout:
			e.t.Fatalf("record %s never as wanted: %+v", id, e.env.Record(id))
		}
	}
}

// live is k's open gateway run, or nil.
func (e *lgEnv) live(k inbox.ThreadKey) *agent.Run {
	e.t.Helper()
	run, err := e.env.Runs.Live(context.Background(), k)
	require.NoError(e.t, err)
	return run
}

// lgRun is a LangGraph run as the server lists it.
type lgRun struct {
	RunID             string         `json:"run_id"`
	Status            string         `json:"status"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	Metadata          map[string]any `json:"metadata"`
	Kwargs            struct {
		Input   json.RawMessage `json:"input"`
		Command json.RawMessage `json:"command"`
		Webhook string          `json:"webhook"`
		Context map[string]any  `json:"context"`
	} `json:"kwargs"`
}

// lgRuns lists k's LangGraph runs, oldest first (the JS server's order).
func (e *lgEnv) lgRuns(k inbox.ThreadKey) []lgRun {
	e.t.Helper()
	var out []lgRun
	e.getJSON("/threads/"+langgraph.ThreadID(k)+"/runs?limit=100", &out)
	return out
}

// lgThread is a LangGraph thread as the server shows it.
type lgThread struct {
	Status   string         `json:"status"`
	Metadata map[string]any `json:"metadata"`
	Values   struct {
		Messages []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			ID      string          `json:"id"`
		} `json:"messages"`
	} `json:"values"`
	Interrupts map[string][]struct {
		ID    string          `json:"id"`
		Value json.RawMessage `json:"value"`
	} `json:"interrupts"`
}

func (e *lgEnv) lgThread(k inbox.ThreadKey) lgThread {
	e.t.Helper()
	var out lgThread
	e.getJSON("/threads/"+langgraph.ThreadID(k), &out)
	return out
}

// texts are the thread's messages as type: text.
func (t lgThread) texts() []string {
	var out []string
	for _, m := range t.Values.Messages {
		var s string
		_ = json.Unmarshal(m.Content, &s)
		out = append(out, m.Type+": "+s)
	}
	return out
}

func (e *lgEnv) getJSON(path string, out any) {
	e.t.Helper()
	resp, err := http.Get(e.base + path)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode, path)
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(out))
}

// waitChecked waits for a read of k by the follower that ok accepts.
func (e *lgEnv) waitChecked(k inbox.ThreadKey, ok func(langgraph.Check) bool) langgraph.Check {
	e.t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case c := <-e.follower.TestSignals.Checked.C():
			if c.Thread == k && ok(c) {
				return c
			}
		case <-timeout:
			e.t.Fatalf("no read of %s as wanted", k)
		}
	}
}

// question is one Question call.
type question struct {
	origin, runID, callID, tool string
	payload                     json.RawMessage
	thread                      inbox.ThreadKey
}

// fakeQuestions records the questions and expiries the follower reports.
type fakeQuestions struct {
	mu       sync.Mutex
	asked    chan question
	answered []string
	ended    []string
}

func (f *fakeQuestions) Question(_ context.Context, origin string, k inbox.ThreadKey, runID, callID, tool string, payload json.RawMessage) {
	f.asked <- question{origin: origin, runID: runID, callID: callID, tool: tool, payload: payload, thread: k}
}

func (f *fakeQuestions) ToolAnswered(_ context.Context, _ inbox.ThreadKey, callID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answered = append(f.answered, callID)
}

func (f *fakeQuestions) RunEnded(_ context.Context, _ inbox.ThreadKey, runID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, runID)
}

// fakeReplies records the replies queued, keeping the first of each id as the outbox does.
type fakeReplies struct {
	mu     sync.Mutex
	ids    map[string]int
	queued chan reply.Request
}

func (f *fakeReplies) Queue(_ context.Context, _ inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = map[string]int{}
	}
	f.ids[req.ID]++
	if f.ids[req.ID] == 1 {
		f.queued <- req
	}
	return reply.Reply{ID: req.ID, Status: reply.StatusQueued}, nil
}
