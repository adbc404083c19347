package console

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// fakeRuntimes answers what a runtime says of a thread.
type fakeRuntimes struct {
	run agent.RuntimeRun
	ok  bool
	err error
}

func (f *fakeRuntimes) RuntimeRun(context.Context, inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	return f.run, f.ok, f.err
}

// A thread whose agent's runtime reports its runs shows what the runtime says now (its
// thread, status, run and what it waits on), escaped; a runtime that cannot be read says
// so; an agent whose runtime cannot say shows nothing.
func TestThreadPageShowsTheRuntimesRun(t *testing.T) {
	rt := &fakeRuntimes{ok: true, run: agent.RuntimeRun{Kind: "langgraph", Thread: "6f1c1c1e-0000-4000-8000-000000000001",
		Status: "busy", Run: "01a2524a-<b>", RunStatus: "running", Waiting: []string{"intr-1"}}}
	f := newFixtureOn(t, testTokens, store.NewConsoleSessions(storetest.OpenSQLite(t)), func(d *Deps) { d.Runtimes = rt })
	ops := f.signIn(opsToken)
	page := f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `<p id="runtime">langgraph thread <code>6f1c1c1e-0000-4000-8000-000000000001</code>: busy · run <code>01a2524a-&lt;b&gt;</code> (running) · waits on people for <code>intr-1</code></p>`)

	// An A2A context's task: the runtime's word for its run, and since when its state holds.
	rt.run = agent.RuntimeRun{Kind: "a2a", Thread: "ctx-1", Status: "interrupted", Term: "task", Run: "task-1",
		RunStatus: "input-required", Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Waiting: []string{"task-1/input-required"}}
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Contains(t, page.body, `<p id="runtime">a2a thread <code>ctx-1</code>: interrupted · task <code>task-1</code> (input-required since `)
	require.Contains(t, page.body, `· waits on people for <code>task-1/input-required</code></p>`)

	rt.err = errors.New("read the LangGraph thread: POST http://lg.example/…: HTTP 503")
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Contains(t, page.body, `The runtime could not be read: read the LangGraph thread: POST http://lg.example/…: HTTP 503`)

	// A hosted runtime's thread is a session.
	rt.err, rt.run = nil, agent.RuntimeRun{Kind: "openai-agents", Unit: "session", Thread: "sess_1",
		Status: "requires_action", Waiting: []string{"req_1"}}
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Contains(t, page.body, `<p id="runtime">openai-agents session <code>sess_1</code>: requires_action · waits on people for <code>req_1</code></p>`)

	rt.err, rt.ok = nil, false
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.NotContains(t, page.body, `id="runtime"`)
}
