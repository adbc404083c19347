package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/a2a"
	"github.com/signalgate/signalgate/targets/a2a/a2atest"
)

// harness is the package's one A2A server, shared by its tests.
var harness a2atest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	harness.Close()
	os.Exit(code)
}

// waitLong only bounds a broken test.
const waitLong = 30 * time.Second

// env is a gateway half (store, presence, dispatcher) whose agent "support" is an a2a
// agent of the shared harness, with the push endpoint served.
type env struct {
	*deliverytest.Env
	t     *testing.T
	h     *a2atest.Harness
	cfg   agent.Config
	tasks *a2a.Tasks
	push  *httptest.Server
}

type envOpts struct {
	path     string // the agent under the harness: echo, ask, hold, v03/echo, …
	busy     string // busy.default
	noPush   bool
	poll     time.Duration
	reply    string
	replies  a2a.Replier
	qs       a2a.Questions
	backend  *storetest.Backend
	dispatch []delivery.Option
	hc       *http.Client // the client of the agent's calls (nil: a default one)
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	h := harness.Get(t)
	e := &env{t: t, h: h}
	srv := server.New(server.Config{}, storetest.Logger(t))
	e.push = httptest.NewServer(srv.Echo())
	t.Cleanup(e.push.Close)
	c := a2a.Config{URL: h.URL + "/" + o.path, Busy: agent.Busy{Default: o.busy}, PollInterval: o.poll}
	if !o.noPush {
		c.CallbackURL = e.push.URL
	}
	if c.PollInterval == 0 {
		c.PollInterval = 200 * time.Millisecond
	}
	e.cfg = a2a.Agent("support", c)
	e.cfg.Target.Reply = o.reply
	e.cfg.Target.Timeout = 10 * time.Second
	require.NoError(t, e.cfg.Validate())
	e.Env = deliverytest.New(t, deliverytest.Config{Backend: o.backend, RealClock: true, Agents: []agent.Config{e.cfg}, Dispatch: o.dispatch,
		Recovery: map[string]delivery.RecoveryRule{a2a.Kind: a2a.Recovery},
		EnvRoutes: func(de *deliverytest.Env) map[string]delivery.Route {
			var opts []a2a.TasksOption
			if o.replies != nil {
				opts = append(opts, a2a.WithReplies(o.replies))
			}
			if o.qs != nil {
				opts = append(opts, a2a.WithQuestions(o.qs))
			}
			e.tasks = a2a.NewTasks(e.cfg, de.Runs, de.Notify, store.NewConnectorState(de.Store), o.hc, service.Base{Logger: storetest.Logger(t)}, opts...)
			e.tasks.TestSignals.State.Init()
			e.tasks.TestSignals.Pushed.Init()
			e.tasks.TestSignals.Polled.Init()
			tg, err := a2a.NewTarget(e.tasks)
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: a2a.Kind, Target: tg, Concurrency: 4}}
		}})
	e.tasks.Mount(srv.Echo())
	ctx := context.Background()
	require.NoError(t, e.tasks.Start(ctx))
	t.Cleanup(func() { _ = e.tasks.Stop(context.Background()) })
	e.Dispatcher.TestSignals.Pass.Init()
	require.NoError(t, e.Dispatcher.Start(ctx))
	return e
}

// note ingests a notification for k.
func (e *env) note(k inbox.ThreadKey, pr inbox.Priority, summary string) string {
	e.t.Helper()
	return e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: pr, Summary: summary})
}

// state waits until k's task is seen in state; it returns the task's id.
func (e *env) state(k inbox.ThreadKey, state string) a2a.TaskState {
	e.t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case s := <-e.tasks.TestSignals.State.C():
			if s.Thread == k && s.State == state {
				return s
			}
		case <-timeout:
			e.t.Fatalf("thread %s: no task seen %s", k, state)
		}
	}
}

func (e *env) signals(k inbox.ThreadKey) []agent.Frame {
	var out []agent.Frame
	for _, f := range e.Log(k) {
		if f.Event == agent.EventSignal {
			out = append(out, f)
		}
	}
	return out
}

// waitLog waits until k's log satisfies ok.
func (e *env) waitLog(k inbox.ThreadKey, what string, ok func([]agent.Frame) bool) []agent.Frame {
	e.t.Helper()
	wake, unsubscribe := e.Broker.Subscribe(k)
	defer unsubscribe()
	timeout := time.After(waitLong)
	for {
		if fs := e.Log(k); ok(fs) {
			return fs
		}
		select {
		case <-wake:
		case <-timeout:
			e.t.Fatalf("thread %s: %s never happened", k, what)
		}
	}
}

// waitSignals waits until k's log holds n signals.
func (e *env) waitSignals(k inbox.ThreadKey, n int) []agent.Frame {
	e.t.Helper()
	e.waitLog(k, "signals", func([]agent.Frame) bool { return len(e.signals(k)) >= n })
	return e.signals(k)
}

// waitRunClosed waits until the log records run runID's end and returns its status.
func (e *env) waitRunClosed(k inbox.ThreadKey, runID string) string {
	e.t.Helper()
	var status string
	e.waitLog(k, "the end of run "+runID, func(fs []agent.Frame) bool {
		for _, f := range fs {
			if f.Event == agent.EventRun && f.RunID == runID && f.RunStatus != agent.RunOpen {
				status = f.RunStatus
				return true
			}
		}
		return false
	})
	return status
}

// received is what the agent was handed in k's context.
func (e *env) received(k inbox.ThreadKey) []a2atest.Received {
	e.t.Helper()
	got, err := e.h.Received(a2a.ContextID(k))
	require.NoError(e.t, err)
	return got
}

// queued records what the tasks queued as replies.
type queued struct {
	mu   sync.Mutex
	reqs []reply.Request
	keys []inbox.ThreadKey
}

// Queue takes a reply as the outbox does: the same id again (another observer of the
// task's end: its answer, a push, a poll) answers the reply as it is.
func (q *queued) Queue(_ context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, r := range q.reqs {
		if r.ID == req.ID {
			return reply.Reply{ID: r.ID, Thread: q.keys[i], Text: r.Text, Status: reply.StatusQueued}, nil
		}
	}
	q.reqs = append(q.reqs, req)
	q.keys = append(q.keys, k)
	return reply.Reply{ID: req.ID, Thread: k, Text: req.Text, Status: reply.StatusQueued}, nil
}

func (q *queued) all() []reply.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]reply.Request(nil), q.reqs...)
}
