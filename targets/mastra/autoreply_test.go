package mastra_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// wakeMastra is a Mastra whose thread stream plays one run (start, its text, finish)
// once `signals` signals were posted, as Mastra starts a run only after the wake.
func wakeMastra(t *testing.T, signals int, text string) string {
	t.Helper()
	var mu sync.Mutex
	posted := 0
	run := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/agents/supportAgent/signals":
			_, _ = io.Copy(io.Discard, r.Body)
			mu.Lock()
			if posted++; posted == signals {
				close(run)
			}
			mu.Unlock()
			_, _ = io.WriteString(w, `{"accepted":true}`)
		case "/api/agents/supportAgent/threads/subscribe":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": connected\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-run:
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, `data: {"type":"start","runId":"m1"}`+"\n\n"+
				`data: {"type":"step-start","runId":"m1"}`+"\n\n"+
				`data: {"type":"text-delta","runId":"m1","payload":{"text":"`+text+`"}}`+"\n\n"+
				`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// flaky is an outbox whose first failures Queue attempts fail as the store would, then
// takes replies; every attempt is sent on tries.
type flaky struct {
	mu    sync.Mutex
	fail  int
	tries chan reply.Request
	held  map[string]reply.Request
}

func (q *flaky) Queue(_ context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tries <- req
	if q.fail > 0 {
		q.fail--
		return reply.Reply{}, errors.New("record reply: database is locked")
	}
	q.held[req.ID] = req
	return reply.Reply{ID: req.ID, Thread: k, Text: req.Text, Status: reply.StatusQueued}, nil
}

func autoFollower(t *testing.T, u string, p *presence, q mastra.Replier) (*mastra.Follower, *mastra.Target) {
	t.Helper()
	cfg := config(u)
	cfg.Target.Reply = agent.ReplyAuto
	f := mastra.NewFollower(cfg, p, func([]inbox.ThreadKey) {}, service.Base{},
		mastra.WithBackoff(time.Millisecond, 10*time.Millisecond), mastra.WithReplies(q))
	require.NoError(t, f.Start(context.Background()))
	t.Cleanup(func() { _ = f.Stop(context.Background()) })
	tg, err := mastra.New(cfg, mastra.WithFollower(f))
	require.NoError(t, err)
	return f, tg
}

func wake(runID string, replyTo any, action agent.Behavior, n int) agent.Handoff {
	return agent.Handoff{Thread: thread, Behavior: action, RunID: runID, ReplyTo: replyTo, Attempt: 1,
		Signal: agent.Signal{ID: "sig-" + string(rune('0'+n)), Type: agent.TypeNotification, TagName: agent.TagNotification, Contents: "x"}}
}

func nextTry(t *testing.T, q *flaky) reply.Request {
	t.Helper()
	select {
	case r := <-q.tries:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt to queue the run's answer")
		return reply.Request{}
	}
}

// A run's answer the outbox failed to take (the store was busy) is not lost: it is
// queued again, under the same id, until the outbox has it.
func TestAutoReplyRetriedWhenQueueingFails(t *testing.T) {
	dm := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	p := &presence{live: "run-w", origin: agent.OriginWake}
	q := &flaky{fail: 2, tries: make(chan reply.Request, 10), held: map[string]reply.Request{}}
	_, tg := autoFollower(t, wakeMastra(t, 1, "on it"), p, q)
	_, err := tg.Deliver(context.Background(), wake("run-w", dm, agent.BehaviorWake, 1))
	require.NoError(t, err)

	first, second, third := nextTry(t, q), nextTry(t, q), nextTry(t, q)
	require.Equal(t, "on it", first.Text)
	require.Equal(t, first, second)
	require.Equal(t, first, third, "the same reply each time: the outbox takes it once")
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Equal(t, map[string]reply.Request{first.ID: first}, q.held)
}

// The run a notification woke answers that notification's place, not the place of a
// newer notification that went into the run meanwhile (the thread's latest origin).
func TestAutoReplyAnswersTheWakesPlace(t *testing.T) {
	first := map[string]any{"source": "slack", "connector": "acme", "team": "T1", "channel": "D1"} // as stored
	second := reply.NewTo("github", "gh", github.Place{Repo: "acme/api", Number: 7})
	p := &presence{live: "run-w", origin: agent.OriginWake}
	q := &flaky{tries: make(chan reply.Request, 10), held: map[string]reply.Request{}}
	_, tg := autoFollower(t, wakeMastra(t, 2, "done"), p, q)
	ctx := context.Background()
	_, err := tg.Deliver(ctx, wake("run-w", first, agent.BehaviorWake, 1))
	require.NoError(t, err)
	_, err = tg.Deliver(ctx, wake("run-w", second, agent.BehaviorDeliver, 2))
	require.NoError(t, err)

	got := nextTry(t, q)
	want := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: "D1"})
	require.Equal(t, &want, got.ReplyTo)
}
