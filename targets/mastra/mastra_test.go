package mastra_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

var thread = inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}

// kept is the recovery rule the gateway's target table gives the store for mastra
// targets: what Mastra accepted is not sent again.
var kept = map[string]delivery.RecoveryRule{mastra.Kind: mastra.Recovery}

func config(u string) agent.Config {
	return agent.Config{ID: "support", Token: "support-token-0123456789", Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Settings: mastra.Config{URL: u, AgentID: "supportAgent", Headers: map[string]secret.Secret{"Authorization": "Bearer mastra-key-123"}}}}
}

type call struct {
	path string
	body map[string]any
}

func TestTargetRequests(t *testing.T) {
	var mu sync.Mutex
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "Bearer mastra-key-123", r.Header.Get("Authorization"))
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		mu.Lock()
		calls = append(calls, call{r.URL.Path, body})
		mu.Unlock()
		_, _ = io.WriteString(w, `{"accepted":true,"runId":"r1"}`)
	}))
	defer srv.Close()
	tg, err := mastra.New(config(srv.URL + "/"))
	require.NoError(t, err)
	sig := agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: "notification", Contents: "CI failed",
		Attributes: inbox.Attributes{{Key: "priority", Value: "high"}}, Metadata: map[string]any{"recordId": "rec-1"}}
	ctx := context.Background()
	for _, d := range []agent.Handoff{
		{Thread: thread, Signal: sig, Behavior: agent.BehaviorWake},
		{Thread: thread, Signal: sig, Behavior: agent.BehaviorPersist},
		{Thread: thread, Signal: agent.Signal{ID: "m-1", Type: agent.TypeUser, TagName: "user", Contents: "can you look?",
			Attributes: inbox.Attributes{{Key: "name", Value: "Jane"}}}, Behavior: agent.BehaviorDeliver, DeliverAs: inbox.DeliverAsMessage},
		{Thread: thread, Signal: agent.Signal{ID: "q-1", Type: agent.TypeUser, TagName: "user", Contents: "later"},
			Behavior: agent.BehaviorWake, DeliverAs: inbox.DeliverAsQueued},
		{Thread: thread, Signal: sig, Behavior: agent.BehaviorWake, StreamOptions: map[string]any{"maxSteps": 3}},
		{Thread: thread, Signal: sig, Behavior: agent.BehaviorDeliver, NoWake: true},
	} {
		res, err := tg.Deliver(ctx, d)
		require.NoError(t, err)
		require.Equal(t, agent.Result{Status: http.StatusOK}, res)
	}
	require.Len(t, calls, 6)
	base := "/api/agents/supportAgent"
	require.Equal(t, base+"/signals", calls[0].path)
	require.Equal(t, map[string]any{
		"resourceId": "slack:T1", "threadId": "dm:U1",
		"signal": map[string]any{"id": "sig-1", "type": "notification", "tagName": "notification", "contents": "CI failed",
			"attributes": map[string]any{"priority": "high"}, "metadata": map[string]any{"recordId": "rec-1"}},
		"ifActive": map[string]any{"behavior": "deliver"}, "ifIdle": map[string]any{"behavior": "wake"},
	}, calls[0].body)
	require.Equal(t, map[string]any{"behavior": "persist"}, calls[1].body["ifActive"])
	require.Equal(t, map[string]any{"behavior": "persist"}, calls[1].body["ifIdle"])
	require.Equal(t, base+"/send-message", calls[2].path)
	require.Equal(t, map[string]any{"contents": "can you look?", "attributes": map[string]any{"name": "Jane"},
		"metadata": map[string]any{mastra.MetadataSignalID: "m-1"}}, calls[2].body["message"])
	require.Nil(t, calls[2].body["signal"])
	require.Equal(t, base+"/queue-message", calls[3].path)
	require.Equal(t, map[string]any{"behavior": "wake", "streamOptions": map[string]any{"maxSteps": float64(3)}}, calls[4].body["ifIdle"],
		"ifIdle.streamOptions reach Mastra's wake")
	require.Equal(t, map[string]any{"behavior": "deliver"}, calls[5].body["ifActive"], "a low-only summary goes into the running loop")
	require.Equal(t, map[string]any{"behavior": "persist"}, calls[5].body["ifIdle"], "and never wakes")
}

func TestTargetErrorsAreClassifiedAndRedacted(t *testing.T) {
	codes := []int{http.StatusServiceUnavailable, http.StatusBadRequest}
	i := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if codes[i] == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "30")
		}
		w.WriteHeader(codes[i])
		i++
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://admin:s3cr3t-pass@", 1) + "?key=qsecret"
	tg, err := mastra.New(config(u))
	require.NoError(t, err)
	d := agent.Handoff{Thread: thread, Signal: agent.Signal{ID: "s", Type: agent.TypeNotification, TagName: "n"}, Behavior: agent.BehaviorWake}
	_, err = tg.Deliver(context.Background(), d)
	require.ErrorContains(t, err, "HTTP 503")
	f := agent.DeliveryFailure(err)
	require.True(t, f.Retry)
	require.Equal(t, 30*time.Second, f.RetryAfter)
	require.Equal(t, 503, f.Status)
	_, err = tg.Deliver(context.Background(), d)
	require.ErrorContains(t, err, "HTTP 400")
	f = agent.DeliveryFailure(err)
	require.False(t, f.Retry, "other 4xx fail for good")
	require.Equal(t, 400, f.Status)
	require.Zero(t, f.RetryAfter, "no hint without Retry-After")
	for _, s := range []string{"s3cr3t-pass", "qsecret", "admin"} {
		require.NotContains(t, err.Error(), s)
	}
}

// presence records what the follower does to runs.
type presence struct {
	mu      sync.Mutex
	events  []string
	runs    int
	live    string
	origin  string // the live run's origin (a wake, when a test sets it)
	opened  time.Time
	resumed []inbox.ThreadKey
	beats   int
	closed  chan string // told of every close, when a test sets it
}

func (p *presence) LiveThreads(context.Context, string) ([]inbox.ThreadKey, error) {
	return p.resumed, nil
}

func (p *presence) Open(_ context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != "" {
		p.events = append(p.events, "adopt "+p.live)
		return agent.Run{ID: p.live, Thread: k, Origin: p.origin}, false, nil
	}
	p.runs++
	p.live = fmt.Sprintf("run-%d", p.runs)
	p.events = append(p.events, "open "+p.live+" "+origin)
	return agent.Run{ID: p.live, Thread: k, Origin: origin}, true, nil
}

func (p *presence) Live(_ context.Context, k inbox.ThreadKey) (*agent.Run, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == "" {
		return nil, nil
	}
	return &agent.Run{ID: p.live, Thread: k, Origin: p.origin, OpenedAt: p.opened}, nil
}

func (p *presence) Heartbeat(_ context.Context, k inbox.ThreadKey, id string) (agent.Run, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.beats++
	return agent.Run{ID: id, Thread: k}, nil
}

func (p *presence) Close(_ context.Context, k inbox.ThreadKey, id, status, _ string) (agent.Run, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, "close "+id+" "+status)
	if p.live == id {
		p.live = ""
	}
	if p.closed != nil {
		p.closed <- id + " " + status
	}
	return agent.Run{ID: id, Thread: k, Status: status}, true, nil
}

func (p *presence) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.events...)
}

// The follower mirrors Mastra's runs: start opens (a tool-calls finish continues the
// run), finish/abort/error close, idle transitions reach notify at once, and a stream
// that ends is reconnected.
func TestFollowerMirrorsRuns(t *testing.T) {
	streams := []string{
		// First connection: one run with a tool call in the middle, then EOF.
		": connected\n\n" +
			`data: {"type":"start","runId":"m1","from":"AGENT","payload":{"id":"supportAgent"}}` + "\n\n" +
			`data: {"type":"step-finish","runId":"m1","payload":{"stepResult":{"reason":"tool-calls","isContinued":true}}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"tool-calls","isContinued":true}}}` + "\n\n" +
			": heartbeat\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop","isContinued":false}}}` + "\n\n",
		// After reconnecting: an aborted run and one that errors.
		": connected\n\n" +
			`data: {"type":"start","runId":"m2"}` + "\n\n" +
			`data: {"type":"abort","runId":"m2"}` + "\n\n" +
			`data: {"type":"start","runId":"m3"}` + "\n\n" +
			`data: {"type":"error","runId":"m3","payload":{"error":{"message":"boom"}}}` + "\n\n",
	}
	srvURL := scriptedStreams(t, streams)

	p := &presence{}
	idle := make(chan inbox.ThreadKey, 10)
	f := mastra.NewFollower(config(srvURL), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{},
		mastra.WithBackoff(time.Millisecond, 10*time.Millisecond))
	f.TestSignals.Chunk.Init()
	require.NoError(t, f.Start(context.Background()))
	f.Follow(context.Background(), thread)
	f.Follow(context.Background(), thread) // already followed: no second stream
	timeout := time.After(10 * time.Second)
	for ended := false; !ended; {
		select {
		case c := <-f.TestSignals.Chunk.C():
			ended = c.Type == "error"
		case <-timeout:
			t.Fatal("follower did not reach the second stream's end")
		}
	}
	for range 3 {
		require.Equal(t, thread, <-idle)
	}
	require.NoError(t, f.Stop(context.Background()))
	require.Equal(t, []string{
		"open run-1 mastra", "close run-1 finished",
		"open run-2 mastra", "close run-2 aborted",
		"open run-3 mastra", "close run-3 aborted",
	}, p.log())
}

// A run suspended on a tool call (approval, or a tool's suspend such as ask_user) keeps
// the thread active: no finish closes it until the call has its result. A reconnect
// replays the run from its start, suspension included.
func TestFollowerKeepsSuspendedRunsActive(t *testing.T) {
	streams := []string{
		": connected\n\n" +
			`data: {"type":"start","runId":"m1"}` + "\n\n" +
			`data: {"type":"tool-call","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy"}}` + "\n\n" +
			`data: {"type":"tool-call-approval","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy"}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"finishReason":"suspended"}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}` + "\n\n" +
			": heartbeat\n\n",
		// Reconnected while still suspended: the replay, then the resume.
		": connected\n\n" +
			`data: {"type":"start","runId":"m1"}` + "\n\n" +
			`data: {"type":"tool-call-approval","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy"}}` + "\n\n" +
			`data: {"type":"tool-call-suspended","runId":"m1","payload":{"toolCallId":"c2","toolName":"ask_user"}}` + "\n\n" +
			`data: {"type":"tool-result","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy"}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}` + "\n\n" +
			`data: {"type":"tool-result","runId":"m1","payload":{"toolCallId":"c2","toolName":"ask_user"}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}` + "\n\n",
	}
	srvURL := scriptedStreams(t, streams)

	p := &presence{}
	idle := make(chan inbox.ThreadKey, 10)
	f := mastra.NewFollower(config(srvURL), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{},
		mastra.WithBackoff(time.Millisecond, 10*time.Millisecond))
	require.NoError(t, f.Start(context.Background()))
	f.Follow(context.Background(), thread)
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the run never ended")
	}
	require.NoError(t, f.Stop(context.Background()))
	require.Equal(t, []string{"open run-1 mastra", "adopt run-1", "close run-1 finished"}, p.log(),
		"active through both suspensions; closed by the finish after the last result")
}

// After a restart the follower resumes the threads that still have a live run, without
// waiting for a delivery, so a run that ends meanwhile is closed rather than lapsing.
func TestFollowerResumesLiveThreads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n"+`data: {"type":"start","runId":"m1"}`+"\n\n"+
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := &presence{live: "run-before-restart", resumed: []inbox.ThreadKey{thread}}
	idle := make(chan inbox.ThreadKey, 1)
	f := mastra.NewFollower(config(srv.URL), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{})
	require.NoError(t, f.Start(context.Background()))
	select {
	case k := <-idle:
		require.Equal(t, thread, k)
	case <-time.After(10 * time.Second):
		t.Fatal("a resumed thread's run end was not seen")
	}
	require.NoError(t, f.Stop(context.Background()))
	require.Equal(t, []string{"adopt run-before-restart", "close run-before-restart finished"}, p.log())
}

// A thread idle for the idle period is no longer followed: its goroutine ends and its
// connection closes. A later delivery follows it again.
func TestFollowerUnfollowsIdleThreads(t *testing.T) {
	conns := make(chan struct{}, 4)
	closed := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n")
		w.(http.Flusher).Flush()
		conns <- struct{}{}
		<-r.Context().Done()
		closed <- struct{}{}
	}))
	defer srv.Close()
	var mu sync.Mutex
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	fire := make(chan time.Time)
	f := mastra.NewFollower(config(srv.URL), &presence{}, func([]inbox.ThreadKey) {}, service.Base{Now: clock},
		mastra.WithIdleUnfollow(time.Minute),
		mastra.WithIdleTimer(func(time.Duration) <-chan time.Time { return fire }))
	f.TestSignals.Exited.Init()
	exited := f.TestSignals.Exited.C()
	require.NoError(t, f.Start(context.Background()))
	defer func() { require.NoError(t, f.Stop(context.Background())) }()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
	}

	f.Follow(context.Background(), thread)
	wait(conns, "no connection")
	advance(40 * time.Second)
	f.Follow(context.Background(), thread) // a delivery keeps the thread followed
	advance(40 * time.Second)
	fire <- clock() // 80s after the first delivery, 40s after the last: not idle yet
	require.Equal(t, 1, f.Followed())

	advance(30 * time.Second)
	fire <- clock()
	select {
	case k := <-exited:
		require.Equal(t, thread, k)
	case <-time.After(10 * time.Second):
		t.Fatal("the idle thread's goroutine did not end")
	}
	wait(closed, "the idle thread's connection stayed open")
	require.Zero(t, f.Followed())

	f.Follow(context.Background(), thread)
	wait(conns, "a later delivery did not follow the thread again")
	require.Equal(t, 1, f.Followed())
}

// scriptedStreams serves Mastra's thread subscribe route: the n-th connection gets
// streams[n] and EOF (the follower reconnects); once they are used up a connection stays
// open until the client leaves or the test ends.
func scriptedStreams(t *testing.T, streams []string) string {
	t.Helper()
	var mu sync.Mutex
	conn := 0
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/agents/supportAgent/suspended-runs" {
			// A follower with approvals reconciles on start and after a reconnect.
			_, _ = io.WriteString(w, `{"runs":[],"total":0}`)
			return
		}
		require.Equal(t, "/api/agents/supportAgent/threads/subscribe", r.URL.Path)
		var body map[string]string
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		require.Equal(t, map[string]string{"resourceId": thread.Resource, "threadId": thread.Thread}, body)
		mu.Lock()
		n := conn
		conn++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n < len(streams) {
			_, _ = io.WriteString(w, streams[n])
			return // EOF: the follower reconnects
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	return srv.URL
}
