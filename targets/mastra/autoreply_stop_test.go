package mastra_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/mastra"
)

// memoryMastra is a Mastra whose thread stream plays one woken run (two steps, the last
// one's text the answer) on the first connection after the wake, and nothing to later
// subscribers (a finished run is not replayed); its memory holds the thread's messages,
// the answer newest.
type memoryMastra struct {
	URL    string
	answer string

	mu       sync.Mutex
	woke     chan struct{}
	played   bool
	answered time.Time
	recalls  int
}

func newMemoryMastra(t *testing.T, answer string) *memoryMastra {
	t.Helper()
	m := &memoryMastra{answer: answer, woke: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *memoryMastra) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/agents/supportAgent/signals":
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case m.woke <- struct{}{}:
		default:
		}
		_, _ = io.WriteString(w, `{"accepted":true,"runId":"m1"}`)
	case "/api/agents/supportAgent/threads/subscribe":
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n")
		w.(http.Flusher).Flush()
		m.mu.Lock()
		played := m.played
		m.mu.Unlock()
		if !played {
			select {
			case <-m.woke:
			case <-r.Context().Done():
				return
			}
			m.mu.Lock()
			m.played, m.answered = true, time.Now().UTC()
			m.mu.Unlock()
			_, _ = io.WriteString(w, `data: {"type":"start","runId":"m1"}`+"\n\n"+
				`data: {"type":"step-start","runId":"m1"}`+"\n\n"+
				`data: {"type":"text-delta","runId":"m1","payload":{"text":"looking"}}`+"\n\n"+
				`data: {"type":"step-start","runId":"m1"}`+"\n\n"+
				`data: {"type":"text-delta","runId":"m1","payload":{"text":"`+m.answer+`"}}`+"\n\n"+
				`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	case "/api/memory/threads/dm/messages":
		q := r.URL.Query()
		if q.Get("agentId") != "supportAgent" || q.Get("resourceId") != "acme" {
			http.Error(w, "unexpected query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.recalls++
		at := m.answered
		m.mu.Unlock()
		// Mastra's format 2: the newest page, oldest first; a step's start is a part.
		out := map[string]any{"messages": []map[string]any{
			{"id": "sig-1", "role": "signal", "createdAt": at.Add(-time.Millisecond), "content": map[string]any{"format": 2,
				"parts": []map[string]any{{"type": "text", "text": "is the API down?"}}}},
			{"id": "a-1", "role": "assistant", "createdAt": at, "content": map[string]any{"format": 2, "parts": []map[string]any{
				{"type": "step-start"}, {"type": "text", "text": "looking"}, {"type": "step-start"}, {"type": "text", "text": m.answer}}}},
		}}
		_ = json.NewEncoder(w).Encode(out)
	default:
		http.NotFound(w, r)
	}
}

// gate stands in front of the outbox as a failing store would: down, every attempt
// fails; lost, the first attempt is recorded but answered with an error (the commit's
// answer lost). Every attempt is counted.
type gate struct {
	next mastra.Replier

	mu    sync.Mutex
	down  bool
	lost  bool
	tries int
	tried chan struct{}
}

func (g *gate) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	g.mu.Lock()
	g.tries++
	down, lost := g.down, g.lost
	g.lost = false
	g.mu.Unlock()
	defer func() {
		select {
		case g.tried <- struct{}{}:
		default:
		}
	}()
	switch {
	case lost:
		_, _ = g.next.Queue(ctx, k, req)
		return reply.Reply{}, errors.New("record reply: connection reset by peer")
	case down:
		return reply.Reply{}, errors.New("record reply: database is locked")
	}
	return g.next.Queue(ctx, k, req)
}

func (g *gate) set(down bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.down = down
}

// waitTries waits until the outbox was tried at least n times.
func (g *gate) waitTries(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		tries := g.tries
		g.mu.Unlock()
		if tries >= n {
			return
		}
		select {
		case <-g.tried:
		case <-deadline:
			t.Fatalf("the outbox was tried %d times, want %d", tries, n)
		}
	}
}

// closings is the gateway's presence with every closed run reported.
type closings struct {
	*agent.Runs
	closed chan string
}

func (c closings) Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error) {
	run, idle, err := c.Runs.Close(ctx, k, id, status, cause)
	if err == nil {
		c.closed <- id
	}
	return run, idle, err
}

// A woken run's answer is in the outbox before its end is recorded: while the outbox
// fails (the store is down) the run stays open, so a gateway stopped meanwhile finds it
// open when it starts again, reads the answer back from Mastra's memory and posts it,
// exactly once, to where the waking message came from — also when the first attempt was
// in fact recorded before the store failed (the same reply id: the gateway run's).
func TestAutoReplyHeldAcrossAStop(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := "outbox down"
		if lost {
			name = "first attempt recorded, its answer lost"
		}
		t.Run(name, func(t *testing.T) {
			for _, b := range storetest.Backends(t) { // a database per scenario
				t.Run(b.Name, func(t *testing.T) { autoReplyAcrossAStop(t, b, lost) })
			}
		})
	}
}

func autoReplyAcrossAStop(t *testing.T, b storetest.Backend, lost bool) {
	ctx := context.Background()
	mm := newMemoryMastra(t, "the API is up again")
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 5 * time.Second, Reply: agent.ReplyAuto, Settings: mastra.Config{URL: mm.URL, AgentID: "supportAgent"}}}
	require.NoError(t, cfg.Validate())
	slackPosts := &sender{posts: map[string][]string{}}
	var (
		outbox *reply.Service
		runs   closings
		g      *gate
		first  *mastra.Follower
	)
	newFollower := func() *mastra.Follower {
		return mastra.NewFollower(cfg, runs, func([]inbox.ThreadKey) {}, service.Base{Logger: storetest.Logger(t)},
			mastra.WithBackoff(5*time.Millisecond, 50*time.Millisecond), mastra.WithResyncWait(20*time.Millisecond), mastra.WithReplies(g))
	}
	e := deliverytest.New(t, deliverytest.Config{Recovery: kept, Backend: &b, RealClock: true, Agents: []agent.Config{cfg},
		Dispatch: []delivery.Option{delivery.WithReplyProvenance(slackVouches)},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			outbox = reply.New(store.NewReplies(e.Store), map[string]reply.Sender{"slack": slackPosts}, service.Base{}, reply.WithProvenance(slackVouches), reply.WithPlaces(kindstest.Places()))
			runs = closings{Runs: e.Runs, closed: make(chan string, 4)}
			g = &gate{next: outbox, down: true, lost: lost, tried: make(chan struct{}, 1)}
			first = newFollower()
			tg, err := mastra.New(cfg, mastra.WithFollower(first))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		}})
	require.NoError(t, first.Start(ctx))
	t.Cleanup(func() { _ = first.Stop(context.Background()) })

	k := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "dm"}
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", Priority: inbox.PriorityUrgent,
		Summary: "is the API down?", Metadata: slackOrigin(dm)})
	e.Pass()
	woken, err := e.Runs.Live(ctx, k)
	require.NoError(t, err)
	require.NotNil(t, woken)
	require.Equal(t, agent.OriginWake, woken.Origin)

	g.waitTries(t, 3) // the run finished; its answer meets the failing outbox, again and again
	require.NoError(t, first.Stop(ctx))
	live, err := e.Runs.Live(ctx, k)
	require.NoError(t, err)
	require.NotNil(t, live, "the run's end is not recorded while its answer is not in the outbox")
	require.Equal(t, woken.ID, live.ID)
	select {
	case id := <-runs.closed:
		t.Fatalf("run %s closed before its answer was queued", id)
	default:
	}

	g.set(false) // the store is back; the gateway starts again
	after := newFollower()
	require.NoError(t, after.Start(ctx))
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	select {
	case id := <-runs.closed:
		require.Equal(t, woken.ID, id)
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed run was never closed")
	}
	rs, _, err := outbox.List(ctx, reply.Filter{Agent: k.Agent, Thread: k.Thread})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, reply.RunAnswerID(woken.ID), rs[0].ID)
	require.Equal(t, "the API is up again", rs[0].Text, "the last step's text, read back from Mastra's memory")
	require.Equal(t, dm, rs[0].To)
	_, err = outbox.RunOnce(ctx)
	require.NoError(t, err)
	require.NoError(t, after.Stop(ctx))

	// Started once more: nothing is left to answer.
	again := newFollower()
	require.NoError(t, again.Start(ctx))
	require.NoError(t, again.Stop(ctx))
	_, err = outbox.RunOnce(ctx)
	require.NoError(t, err)
	slackPosts.mu.Lock()
	defer slackPosts.mu.Unlock()
	require.Equal(t, map[string][]string{rs[0].ID: {"the API is up again"}}, slackPosts.posts, "posted exactly once")
	mm.mu.Lock()
	defer mm.mu.Unlock()
	require.Equal(t, 1, mm.recalls, "read back once, by the start that found the run open")
}

// recallMastra is a Mastra that no longer runs the thread (its stream replays nothing)
// and whose memory gives each answer in turn, the last one from then on.
func recallMastra(t *testing.T, answers ...func(w http.ResponseWriter)) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/agents/supportAgent/threads/subscribe":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": connected\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/api/memory/threads/" + thread.Thread + "/messages":
			if r.Header.Get("Authorization") != "Bearer mastra-key-123" { // the target's headers go along
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			mu.Lock()
			next := answers[0]
			if len(answers) > 1 {
				answers = answers[1:]
			}
			mu.Unlock()
			next(w)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func messages(ms ...map[string]any) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(map[string]any{"messages": ms}) }
}

func status(code int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { http.Error(w, http.StatusText(code), code) }
}

// A woken run that ended while the gateway was away is answered from Mastra's memory
// only with an answer that is the run's own: the thread's newest message, an assistant
// one, no older than the run. A thread whose newest message is the waking signal (the
// run ended without answering), an older answer (a run before), or a Mastra without
// memory answers nothing; a Mastra that fails for now is asked again. The run is closed
// either way.
func TestAutoReplyRecalledOnlyFromTheRunsOwnAnswer(t *testing.T) {
	opened := time.Now().UTC()
	answer := func(text string, at time.Time) map[string]any {
		return map[string]any{"id": "a", "role": "assistant", "createdAt": at, "content": map[string]any{"format": 2,
			"parts": []map[string]any{{"type": "text", "text": text}}}}
	}
	signal := map[string]any{"id": "sig-1", "role": "signal", "createdAt": opened.Add(time.Second), "content": "hello"}
	for name, tc := range map[string]struct {
		memory []func(http.ResponseWriter)
		want   string // "" when nothing is queued
	}{
		"the run's answer":                        {memory: []func(http.ResponseWriter){messages(signal, answer("done", opened.Add(2*time.Second)))}, want: "done"},
		"a plain string answer":                   {memory: []func(http.ResponseWriter){messages(map[string]any{"role": "assistant", "createdAt": opened.Add(time.Second), "content": " ok "})}, want: "ok"},
		"Mastra fails for now":                    {memory: []func(http.ResponseWriter){status(503), status(502), messages(answer("later", opened.Add(time.Second)))}, want: "later"},
		"the newest message is the waking signal": {memory: []func(http.ResponseWriter){messages(answer("old", opened.Add(-time.Hour)), signal)}},
		"the answer of a run before":              {memory: []func(http.ResponseWriter){messages(answer("old", opened.Add(-time.Hour)))}},
		"no memory":                               {memory: []func(http.ResponseWriter){status(404)}},
	} {
		t.Run(name, func(t *testing.T) {
			p := &presence{live: "run-w", origin: agent.OriginWake, opened: opened, resumed: []inbox.ThreadKey{thread}, closed: make(chan string, 1)}
			q := &flaky{tries: make(chan reply.Request, 10), held: map[string]reply.Request{}}
			cfg := config(recallMastra(t, tc.memory...))
			cfg.Target.Reply = agent.ReplyAuto
			f := mastra.NewFollower(cfg, p, func([]inbox.ThreadKey) {}, service.Base{},
				mastra.WithBackoff(time.Millisecond, 10*time.Millisecond), mastra.WithResyncWait(time.Millisecond), mastra.WithReplies(q))
			require.NoError(t, f.Start(context.Background()))
			t.Cleanup(func() { _ = f.Stop(context.Background()) })
			select {
			case got := <-p.closed:
				require.Equal(t, "run-w aborted", got)
			case <-time.After(10 * time.Second):
				t.Fatal("the run was never closed")
			}
			q.mu.Lock()
			defer q.mu.Unlock()
			if tc.want == "" {
				require.Empty(t, q.held)
				return
			}
			require.Equal(t, map[string]reply.Request{"run-run-w": {ID: "run-run-w", Text: tc.want}}, q.held)
		})
	}
}
