package langgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/langgraph"
	"github.com/signalgate/signalgate/telemetry"
)

var thread = inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"}

// fakeServer answers the Agent Server routes the target calls: threads have status,
// runs are answered runStatus (or refused with runCode), and every request is recorded.
type fakeServer struct {
	mu       sync.Mutex
	status   string // the thread's status
	runCode  int    // POST …/runs answers this when not 200
	requests []fakeRequest
	srv      *httptest.Server
}

type fakeRequest struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

func newFakeServer(t *testing.T, status string) *fakeServer {
	f := &fakeServer{status: status}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.requests = append(f.requests, fakeRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		status, runCode := f.status, f.runCode
		f.mu.Unlock()
		id := langgraph.ThreadID(thread)
		switch {
		case r.URL.Path == "/threads":
			_, _ = w.Write([]byte(`{"thread_id":"` + id + `","status":"` + status + `","values":{"messages":[]}}`))
		case r.URL.Path == "/threads/search":
			_, _ = w.Write([]byte(`[{"thread_id":"` + id + `","status":"` + status + `"}]`))
		case strings.HasPrefix(r.URL.Path, "/assistants/"):
			_, _ = w.Write([]byte(`{"graph_id":"echo"}`))
		case strings.HasSuffix(r.URL.Path, "/runs") && runCode != 0:
			w.WriteHeader(runCode)
			_, _ = w.Write([]byte("Thread is already running a task."))
		case strings.HasSuffix(r.URL.Path, "/runs"):
			_, _ = w.Write([]byte(`{"run_id":"run-1","status":"pending"}`))
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/threads/") && strings.Count(r.URL.Path, "/") == 2:
			_, _ = w.Write([]byte(`{"status":"` + status + `","values":{"messages":[{"type":"human","content":"x"},{"type":"ai","content":"all green"}]}}`))
		case strings.HasSuffix(r.URL.Path, "/state"):
			_, _ = w.Write([]byte(`{"checkpoint":{}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// paths are the requests' methods and paths, with the thread id shown as {id}.
func (f *fakeServer) paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, r.Method+" "+strings.ReplaceAll(r.Path, langgraph.ThreadID(thread), "{id}"))
	}
	return out
}

func (f *fakeServer) last() fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

// noPresence is presence that records the runs opened.
type noPresence struct {
	mu     sync.Mutex
	opened []inbox.ThreadKey
}

func (*noPresence) LiveThreads(context.Context, string) ([]inbox.ThreadKey, error) { return nil, nil }
func (*noPresence) Live(context.Context, inbox.ThreadKey) (*agent.Run, error)      { return nil, nil }
func (p *noPresence) Open(_ context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opened = append(p.opened, k)
	return agent.Run{ID: "opened", Thread: k, Origin: origin}, true, nil
}
func (*noPresence) Heartbeat(context.Context, inbox.ThreadKey, string) (agent.Run, error) {
	return agent.Run{}, nil
}
func (*noPresence) Close(context.Context, inbox.ThreadKey, string, string, string) (agent.Run, bool, error) {
	return agent.Run{}, true, nil
}

func target(t *testing.T, url string, c langgraph.Config, opts ...langgraph.Option) (*langgraph.Target, *noPresence) {
	t.Helper()
	c.URL, c.AssistantID = url, "echo"
	p := &noPresence{}
	f := langgraph.NewFollower(langgraph.Agent("support", c), p, func([]inbox.ThreadKey) {}, service.Base{})
	tg, err := langgraph.New(f, opts...)
	require.NoError(t, err)
	return tg, p
}

func handoff(b agent.Behavior, runID, priority string) agent.Handoff {
	attrs := inbox.Attributes{}
	if priority != "" {
		attrs = attrs.Set("priority", priority)
	}
	return agent.Handoff{Thread: thread, Behavior: b, RunID: runID, Attempt: 1,
		Signal: agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: "notification", Contents: "CI failed", Attributes: attrs}}
}

// A wake creates the thread the first time (with the gateway's ids and the graph in its
// metadata) and starts one run: the signal's XML in the default input, busy's strategy
// for its priority, the webhook signed for its thread and gateway run.
func TestDeliverWakeStartsOneRun(t *testing.T) {
	srv := newFakeServer(t, "idle")
	tg, _ := target(t, srv.srv.URL, langgraph.Config{CallbackURL: "https://gw.example/", CallbackToken: "callback-token-0123456789",
		RunConfig: map[string]any{"tags": []any{"sg"}}})
	d := handoff(agent.BehaviorWake, "gw-run-1", "urgent")
	d.StreamOptions = map[string]any{"context": map[string]any{"model": "careful"}}
	_, err := tg.Deliver(context.Background(), d)
	require.NoError(t, err)
	require.Equal(t, []string{"GET /assistants/echo", "POST /threads", "POST /threads/{id}/runs"}, srv.paths())
	create := srv.requests[1].Body
	require.Equal(t, langgraph.ThreadID(thread), create["thread_id"])
	require.Equal(t, "do_nothing", create["if_exists"])
	require.Equal(t, map[string]any{"signalgate_agent": "support", "signalgate_resource": "acme/api", "signalgate_thread": "t1",
		"graph_id": "echo"}, create["metadata"])
	run := srv.last().Body
	require.Equal(t, "echo", run["assistant_id"])
	require.Equal(t, langgraph.Interrupt, run["multitask_strategy"], "urgent interrupts by default")
	require.Equal(t, "create", run["if_not_exists"])
	require.Equal(t, map[string]any{"messages": []any{map[string]any{"role": "user", "id": "sig-1", "content": d.Signal.XML()}}}, run["input"])
	require.Equal(t, map[string]any{"model": "careful"}, run["context"], "the wake's stream options")
	require.Nil(t, run["config"], "stream options without config send none")
	require.Equal(t, "gw-run-1", run["metadata"].(map[string]any)[langgraph.MetaRun])
	hook, _ := run["webhook"].(string)
	require.True(t, strings.HasPrefix(hook, "https://gw.example/targets/langgraph/support/webhook?"), hook)
	require.Contains(t, hook, "run=gw-run-1")
	require.Contains(t, hook, "sig=")

	// The thread exists now: the next wake is one request.
	_, err = tg.Deliver(context.Background(), handoff(agent.BehaviorWake, "gw-run-2", "high"))
	require.NoError(t, err)
	require.Len(t, srv.paths(), 4)
	require.Equal(t, langgraph.Enqueue, srv.last().Body["multitask_strategy"])
}

// A thread waiting on an interrupt takes no run (it would drop the question), a state
// write beside a running thread would be lost, and reject refuses a run beside another:
// each hands the signal back to wait for the idle thread. Where the gateway holds no run
// on the thread, it opens one, so the held signal waits for the server's run to end.
func TestDeliverHoldsUntilIdle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   string
		runCode  int
		busy     langgraph.Busy
		d        agent.Handoff
		wantRun  bool
		wantOpen bool
	}{
		{name: "interrupted thread", status: "interrupted", d: handoff(agent.BehaviorDeliver, "gw-run", "urgent")},
		{name: "reject, busy thread", status: "busy", busy: langgraph.Busy{Default: langgraph.Reject}, d: handoff(agent.BehaviorDeliver, "gw-run", "high")},
		{name: "reject answered 422", status: "idle", runCode: http.StatusUnprocessableEntity, busy: langgraph.Busy{Default: langgraph.Reject},
			d: handoff(agent.BehaviorDeliver, "gw-run", "high"), wantRun: true},
		{name: "reject answered 409", status: "idle", runCode: http.StatusConflict, busy: langgraph.Busy{Default: langgraph.Reject},
			d: handoff(agent.BehaviorWake, "gw-run", "high"), wantRun: true},
		{name: "state write on a busy thread", status: "busy", d: handoff(agent.BehaviorPersist, "", "low"), wantOpen: true},
		{name: "low-only summary into a running thread", status: "busy", d: func() agent.Handoff {
			d := handoff(agent.BehaviorDeliver, "gw-run", "low")
			d.NoWake = true
			return d
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, tc.status)
			srv.runCode = tc.runCode
			tg, p := target(t, srv.srv.URL, langgraph.Config{Busy: tc.busy})
			_, err := tg.Deliver(context.Background(), tc.d)
			require.ErrorIs(t, err, agent.ErrHoldUntilIdle)
			ran := false
			for _, path := range srv.paths() {
				ran = ran || path == "POST /threads/{id}/runs"
				require.NotEqual(t, "POST /threads/{id}/state", path)
			}
			require.Equal(t, tc.wantRun, ran)
			if tc.wantOpen {
				require.Equal(t, []inbox.ThreadKey{thread}, p.opened)
			} else {
				require.Empty(t, p.opened)
			}
		})
	}
}

// A logged signal on an idle thread is a state update with the rendered input; a
// queued message is enqueued whatever busy says; a server error is retried.
func TestDeliverPersistQueuedAndFailures(t *testing.T) {
	srv := newFakeServer(t, "idle")
	tg, _ := target(t, srv.srv.URL, langgraph.Config{Busy: langgraph.Busy{Default: langgraph.Reject},
		Input: map[string]any{"events": []any{map[string]any{"xml": "{{.XML}}", "from": "{{.Agent}}/{{.Resource}}", "n": 1}}}})
	d := handoff(agent.BehaviorPersist, "", "low")
	_, err := tg.Deliver(context.Background(), d)
	require.NoError(t, err)
	require.Equal(t, "POST /threads/{id}/state", srv.paths()[len(srv.paths())-1])
	require.Equal(t, map[string]any{"events": []any{map[string]any{"xml": d.Signal.XML(), "from": "support/acme/api", "n": float64(1)}}},
		srv.last().Body["values"])

	q := handoff(agent.BehaviorDeliver, "gw-run", "")
	q.DeliverAs = inbox.DeliverAsQueued
	_, err = tg.Deliver(context.Background(), q)
	require.NoError(t, err)
	require.Equal(t, langgraph.Enqueue, srv.last().Body["multitask_strategy"], "a queued message starts the next run")

	srv.runCode = http.StatusServiceUnavailable
	_, err = tg.Deliver(context.Background(), handoff(agent.BehaviorWake, "gw-run-2", "urgent"))
	de := agent.DeliveryFailure(err)
	require.True(t, de.Retry)
	require.Equal(t, http.StatusServiceUnavailable, de.Status)
	require.False(t, errors.Is(err, agent.ErrHoldUntilIdle))
}

// Every request to the server carries the traceparent of its client span, a child of
// the delivery's span; with tracing off none is sent.
func TestTraceparentToLangGraph(t *testing.T) {
	srv := newFakeServer(t, "idle")
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("test").Start(context.Background(), "deliver langgraph")
	tg, _ := target(t, srv.srv.URL, langgraph.Config{}, langgraph.WithTracerProvider(tp))
	_, err := tg.Deliver(ctx, handoff(agent.BehaviorWake, "gw-run", "urgent"))
	require.NoError(t, err)
	span.End()
	srv.mu.Lock()
	reqs := append([]fakeRequest(nil), srv.requests...)
	srv.mu.Unlock()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		sent := telemetry.SpanContext(r.Header.Get("traceparent"))
		require.Equal(t, span.SpanContext().TraceID(), sent.TraceID(), "%s %s", r.Method, r.Path)
	}

	off := newFakeServer(t, "idle")
	tg, _ = target(t, off.srv.URL, langgraph.Config{}, langgraph.WithTracerProvider(telemetry.Off()))
	_, err = tg.Deliver(ctx, handoff(agent.BehaviorWake, "gw-run", "urgent"))
	require.NoError(t, err)
	for _, r := range off.requests {
		require.Empty(t, r.Header.Get("traceparent"))
	}
}

// A gateway thread's LangGraph thread is a UUIDv5 of its agent, resource and thread:
// the same everywhere, distinct per thread.
func TestThreadIDIsAStableUUIDv5(t *testing.T) {
	id := langgraph.ThreadID(thread)
	u, err := uuid.Parse(id)
	require.NoError(t, err)
	require.EqualValues(t, 5, u.Version())
	require.Equal(t, id, langgraph.ThreadID(inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"}))
	require.NotEqual(t, id, langgraph.ThreadID(inbox.ThreadKey{Agent: "support", Resource: "acme/ap", Thread: "it1"}))
	require.NotEqual(t, id, langgraph.ThreadID(inbox.ThreadKey{Agent: "other", Resource: "acme/api", Thread: "t1"}))
}

func TestConfigValidation(t *testing.T) {
	bad := langgraph.Config{URL: "ftp://x", Busy: langgraph.Busy{Urgent: "drop"}, Input: map[string]any{"m": "{{.XML"},
		CallbackURL: "https://gw.example/?x=1", PollInterval: time.Millisecond}
	err := bad.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"url: want an http(s) URL",
		"assistant_id: required for kind langgraph",
		`busy.urgent: unknown strategy "drop" (want enqueue, interrupt, rollback or reject)`,
		"input: m: template",
		"callback_url: want the gateway's http(s) base URL",
		"callback_token: required with callback_url",
		"poll_interval: at least 1s",
	} {
		require.ErrorContains(t, err, want)
	}
	require.ErrorContains(t, langgraph.Config{CallbackToken: "short"}.CheckCredentials(), "callback_token: must be at least 16 characters")
	require.ErrorContains(t, langgraph.Config{URL: "http://x", AssistantID: "a", CallbackToken: "0123456789abcdef"}.Validate(),
		"callback_token: set only with callback_url")

	d := langgraph.Config{}.WithDefaults()
	require.Equal(t, langgraph.Interrupt, d.Busy.For("urgent"))
	for _, p := range []string{"high", "medium", "low", ""} {
		require.Equal(t, langgraph.Enqueue, d.Busy.For(p))
	}
	set := langgraph.Config{Busy: langgraph.Busy{High: langgraph.Rollback, Default: langgraph.Reject}}.WithDefaults()
	require.Equal(t, langgraph.Reject, set.Busy.For("urgent"), "with busy given, an unset priority takes busy.default")
	require.Equal(t, langgraph.Rollback, set.Busy.For("high"))
	require.Equal(t, 10*time.Second, d.PollInterval)
	require.Equal(t, map[string]any{"config": map[string]any{"a": 1}}, langgraph.Config{RunConfig: map[string]any{"a": 1}}.WakeStreamOptions())

	require.ErrorContains(t, func() error {
		f := langgraph.NewFollower(agent.Config{ID: "x", RunLease: 5 * time.Second,
			Target: agent.TargetConfig{Kind: langgraph.Kind, Settings: langgraph.Config{URL: "http://x", AssistantID: "a", PollInterval: 10 * time.Second}}},
			&noPresence{}, nil, service.Base{})
		return f.Start(context.Background())
	}(), "poll_interval (10s) must be shorter than run_lease (5s)")
}

// Every langgraph agent's webhooks share one route: each request reaches its own
// agent's follower, a URL signed for another agent or thread is refused, and an agent
// without webhooks is not found.
func TestWebhooksOfSeveralAgents(t *testing.T) {
	srv := newFakeServer(t, "idle")
	e := echo.New()
	followers := map[string]*langgraph.Follower{}
	hooks := map[string]string{}
	for _, id := range []string{"support", "ops"} {
		c := langgraph.Config{URL: srv.srv.URL, AssistantID: "echo", CallbackURL: "http://gw.example", CallbackToken: secret.Secret("callback-token-of-" + id)}
		f := langgraph.NewFollower(langgraph.Agent(id, c), &noPresence{}, func([]inbox.ThreadKey) {}, service.Base{})
		f.TestSignals.Webhook.Init()
		f.Mount(e)
		followers[id] = f
		tg, err := langgraph.New(f)
		require.NoError(t, err)
		d := handoff(agent.BehaviorWake, "gw-run-"+id, "urgent")
		d.Thread.Agent = id
		_, err = tg.Deliver(context.Background(), d)
		require.NoError(t, err)
		hooks[id] = strings.TrimPrefix(srv.last().Body["webhook"].(string), "http://gw.example")
	}
	quiet := langgraph.NewFollower(langgraph.Agent("quiet", langgraph.Config{URL: srv.srv.URL, AssistantID: "echo"}), &noPresence{},
		func([]inbox.ThreadKey) {}, service.Base{})
	quiet.Mount(e)
	post := func(path string) int {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"run_id":"run-1","status":"success"}`)))
		return rec.Code
	}
	for id, path := range hooks {
		require.Equal(t, http.StatusNoContent, post(path), id)
		got := <-followers[id].TestSignals.Webhook.C()
		require.Equal(t, id, got.Agent)
	}
	require.Equal(t, http.StatusUnauthorized, post(strings.Replace(hooks["support"], "/support/", "/ops/", 1)), "signed for another agent")
	require.Equal(t, http.StatusUnauthorized, post(strings.Replace(hooks["support"], "thread=t1", "thread=t2", 1)), "signed for another thread")
	require.Equal(t, http.StatusNotFound, post(strings.Replace(hooks["support"], "/support/", "/quiet/", 1)))
	require.Equal(t, http.StatusNotFound, post(strings.Replace(hooks["support"], "/support/", "/nobody/", 1)))
}

// A read that finds the server running a thread the gateway holds no run on opens one;
// opening it delivers the previous run's recovered signals to the thread at once,
// through the same target, which must not wait for the lock the read holds.
func TestAdoptedRunTakesRecoveredSignals(t *testing.T) {
	srv := newFakeServer(t, "idle")
	c := langgraph.Config{URL: srv.srv.URL, AssistantID: "echo", CallbackURL: "http://gw.example", CallbackToken: "callback-token-0123456789"}
	cfg := langgraph.Agent("support", c)
	cfg.Token = deliverytest.SupportToken
	var f *langgraph.Follower
	env := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{cfg}, // every kind redelivers: a recovery is pending
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			f = langgraph.NewFollower(cfg, e.Runs, e.Notify, service.Base{})
			f.TestSignals.Checked.Init()
			tg, err := langgraph.New(f)
			require.NoError(t, err)
			return map[string]delivery.Route{"support": delivery.RouteOf(cfg, tg)}
		}})
	e := echo.New()
	f.Mount(e)
	require.NoError(t, f.Start(context.Background()))
	t.Cleanup(func() { _ = f.Stop(context.Background()) })

	env.Ingest(inbox.Notification{Thread: thread, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	env.Pass()
	hook := strings.TrimPrefix(srv.last().Body["webhook"].(string), "http://gw.example")
	live, err := env.Runs.Live(context.Background(), thread)
	require.NoError(t, err)
	_, _, err = env.Runs.Close(context.Background(), thread, live.ID, agent.RunAborted, agent.CauseCrashed)
	require.NoError(t, err)

	srv.mu.Lock()
	srv.status = "busy" // the server runs the thread (someone started a run there)
	srv.mu.Unlock()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, hook, strings.NewReader(`{"run_id":"run-1","status":"error"}`)))
	require.Equal(t, http.StatusNoContent, rec.Code)
	select {
	case c := <-f.TestSignals.Checked.C():
		require.True(t, c.Busy)
	case <-time.After(15 * time.Second): // only bounds a deadlocked read
		t.Fatal("the read never ended")
	}
	adopted, err := env.Runs.Live(context.Background(), thread)
	require.NoError(t, err)
	require.NotNil(t, adopted)
	require.Equal(t, langgraph.Kind, adopted.Origin)
	input, _ := json.Marshal(srv.last().Body["input"])
	require.Contains(t, string(input), `recovered=\"true\"`, "the recovered signal went into the adopted run")
}

// flakyReplies fails the first queue with a failure of the gateway, then takes replies.
type flakyReplies struct {
	mu     sync.Mutex
	calls  int
	queued []reply.Request
}

func (f *flakyReplies) Queue(_ context.Context, _ inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls == 1 {
		return reply.Reply{}, errors.New("database is locked")
	}
	f.queued = append(f.queued, req)
	return reply.Reply{ID: req.ID, Status: reply.StatusQueued}, nil
}

// A woken run's answer the outbox cannot take keeps the run open (never an answer held
// in memory alone, nor a read holding the thread for long): the next read answers it,
// under the same id, and closes it.
func TestAnswerTheOutboxRefusedIsAnsweredByTheNextRead(t *testing.T) {
	srv := newFakeServer(t, "idle")
	c := langgraph.Config{URL: srv.srv.URL, AssistantID: "echo", CallbackURL: "http://gw.example", CallbackToken: "callback-token-0123456789"}
	cfg := langgraph.Agent("support", c)
	cfg.Token, cfg.Target.Reply = deliverytest.SupportToken, agent.ReplyAuto
	replies := &flakyReplies{}
	var f *langgraph.Follower
	env := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{cfg},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			f = langgraph.NewFollower(cfg, e.Runs, e.Notify, service.Base{}, langgraph.WithReplies(replies))
			f.TestSignals.Checked.Init()
			tg, err := langgraph.New(f)
			require.NoError(t, err)
			return map[string]delivery.Route{"support": delivery.RouteOf(cfg, tg)}
		}})
	e := echo.New()
	f.Mount(e)
	require.NoError(t, f.Start(context.Background()))
	t.Cleanup(func() { _ = f.Stop(context.Background()) })
	env.Ingest(inbox.Notification{Thread: thread, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	env.Pass()
	live, err := env.Runs.Live(context.Background(), thread)
	require.NoError(t, err)
	hook := strings.TrimPrefix(srv.last().Body["webhook"].(string), "http://gw.example")
	ended := func() langgraph.Check {
		t.Helper()
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, hook, strings.NewReader(`{"run_id":"run-1","status":"success"}`)))
		require.Equal(t, http.StatusNoContent, rec.Code)
		return <-f.TestSignals.Checked.C()
	}
	require.False(t, ended().Closed, "the outbox failed: the run stays open")
	still, err := env.Runs.Live(context.Background(), thread)
	require.NoError(t, err)
	require.Equal(t, live.ID, still.ID)
	require.True(t, ended().Closed)
	require.Equal(t, []reply.Request{{ID: reply.RunAnswerID(live.ID), Text: "all green"}}, replies.queued)
}
