package delivery_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// stuck holds every delivery until released, counting how many it holds at once.
type stuck struct {
	release  chan struct{}
	entered  chan struct{}
	inFlight atomic.Int32
	maxSeen  atomic.Int32
}

func (s *stuck) Deliver(ctx context.Context, _ agent.Handoff) (agent.Result, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxSeen.Load()
		if n <= m || s.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return agent.Result{}, transient(context.DeadlineExceeded)
}

// A target that hangs holds at most its concurrency in deliveries, and the dispatcher's
// workers stay free for other agents: their deliveries go out while it hangs.
func TestStuckTargetDoesNotSlowOthers(t *testing.T) {
	bad := &stuck{release: make(chan struct{}), entered: make(chan struct{}, 16)}
	var goodMu sync.Mutex
	var goodSeen []string
	goodDelivered := make(chan struct{}, 16)
	env := deliverytest.New(t, deliverytest.Config{
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			good := delivery.TargetFunc(func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
				goodMu.Lock()
				goodSeen = append(goodSeen, d.Thread.Thread)
				goodMu.Unlock()
				goodDelivered <- struct{}{}
				return stream.Deliver(ctx, d)
			})
			return map[string]delivery.Route{
				"coder":   {Kind: "webhook", Target: bad, Concurrency: 1},
				"support": {Kind: "webhook", Target: good, Concurrency: 1},
			}
		},
		Dispatch: []delivery.Option{delivery.WithBatch(16, 2)},
	})
	for _, th := range []string{"a", "b", "c"} {
		env.Ingest(inbox.Notification{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: th}, Source: "github",
			Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "x"})
	}
	for _, th := range []string{"d", "e"} {
		env.Ingest(inbox.Notification{Thread: inbox.ThreadKey{Agent: "support", Resource: "r", Thread: th}, Source: "github",
			Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "y"})
	}
	done := make(chan error, 1)
	go func() {
		_, err := env.Dispatcher.RunOnce(context.Background())
		done <- err
	}()
	<-bad.entered
	// Both of the other agent's threads go out while the stuck target holds its slot.
	for range 2 {
		select {
		case <-goodDelivered:
		case <-time.After(10 * time.Second):
			t.Fatal("a stuck target blocked another agent's deliveries")
		}
	}
	close(bad.release)
	for range 2 {
		<-bad.entered
	}
	require.NoError(t, <-done)
	require.Equal(t, int32(1), bad.maxSeen.Load(), "concurrency 1 holds one delivery at a time")
	goodMu.Lock()
	require.ElementsMatch(t, []string{"d", "e"}, goodSeen)
	goodMu.Unlock()
}

// A queued message waits for the active run to finish and starts the next one; each
// queued message gets its own run, in arrival order, while a plain message goes into the
// active run at once, ahead of notifications.
func TestMessageVersusQueuedMessageOrdering(t *testing.T) {
	env := deliverytest.New(t, deliverytest.Config{})
	k := inbox.ThreadKey{Agent: "coder", Resource: "slack:T1", Thread: "dm:U1"}
	run := env.OpenRun(k)
	msg := func(as, who, text string) {
		env.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "message", DeliverAs: as, Summary: text,
			Priority: inbox.PriorityLow, Attributes: inbox.Attributes{{Key: "name", Value: who}, {Key: "from", Value: "slack"}}})
		env.Clock.Advance(time.Second)
	}
	msg(inbox.DeliverAsQueued, "Bob", "q1")
	msg(inbox.DeliverAsMessage, "Jane", "m1")
	msg(inbox.DeliverAsQueued, "Bob", "q2")
	env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "n1"})
	msg(inbox.DeliverAsMessage, "Jane", "m2")
	env.Pass()

	type seen struct {
		contents string
		action   agent.Behavior
		runID    string
	}
	signals := func() []seen {
		var out []seen
		for _, f := range env.Log(k) {
			if f.Event == agent.EventSignal {
				out = append(out, seen{f.Signal.Contents, f.Behavior, f.RunID})
			}
		}
		return out
	}
	got := signals()
	require.Equal(t, []seen{
		{"m1", agent.BehaviorDeliver, run.ID},
		{"m2", agent.BehaviorDeliver, run.ID},
		{"n1", agent.BehaviorDeliver, run.ID},
	}, got, "messages at once, in arrival order, ahead of notifications; queued ones wait")
	for _, f := range env.Log(k) {
		if f.Signal.Contents == "m1" {
			require.Equal(t, `<user name="Jane" from="slack">m1</user>`, f.XML)
		}
	}

	env.FinishRun(k, run.ID)
	env.Pass()
	got = signals()
	require.Len(t, got, 4)
	require.Equal(t, "q1", got[3].contents)
	require.Equal(t, agent.BehaviorWake, got[3].action, "the first queued message starts the next run")
	second := got[3].runID
	require.NotEqual(t, run.ID, second)

	env.Clock.Advance(time.Minute)
	env.Pass()
	require.Len(t, signals(), 4, "q2 waits for the run q1 started")
	env.FinishRun(k, second)
	env.Pass()
	got = signals()
	require.Len(t, got, 5)
	require.Equal(t, "q2", got[4].contents)
	require.Equal(t, agent.BehaviorWake, got[4].action)
	require.NotEqual(t, second, got[4].runID)
}

// A signal id the thread already logged is not sent to the target again: Mastra would
// show a repeat twice.
func TestRepeatedSignalIDIsNotResent(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	env := deliverytest.New(t, deliverytest.Config{
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": {Kind: "mastra", Target: delivery.TargetFunc(
				func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
					mu.Lock()
					sent = append(sent, d.Signal.ID)
					mu.Unlock()
					return agent.Result{}, nil
				})}}
		},
	})
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "t"}
	body := map[string]any{"signal": map[string]any{"id": "sig-once", "type": "user", "contents": "hi"}}
	for range 2 {
		require.Equal(t, 200, env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, nil))
	}
	mu.Lock()
	require.Equal(t, []string{"sig-once"}, sent)
	mu.Unlock()
}

// A resent signal id the thread already logged, arriving while the thread is idle, opens
// no run and answers like the first time.
func TestResendOnIdleThreadOpensNoRun(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	env := deliverytest.New(t, deliverytest.Config{
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": {Kind: "mastra", Target: delivery.TargetFunc(
				func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
					mu.Lock()
					sent = append(sent, d.Signal.ID)
					mu.Unlock()
					return agent.Result{}, nil
				})}}
		},
	})
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "idle-resend"}
	body := map[string]any{"signal": map[string]any{"id": "sig-wake", "type": "user", "contents": "hi"}}
	type answer struct {
		ID     string         `json:"id"`
		Action agent.Behavior `json:"action"`
		RunID  string         `json:"runId"`
	}
	var first answer
	require.Equal(t, 200, env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, &first))
	require.Equal(t, agent.BehaviorWake, first.Action)
	require.NotEmpty(t, first.RunID)
	env.FinishRun(k, first.RunID)
	runs := len(env.Log(k))

	var again answer
	require.Equal(t, 200, env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, &again))
	require.Equal(t, first, again)
	live, err := env.Runs.Live(t.Context(), k)
	require.NoError(t, err)
	require.Nil(t, live, "the resend opened a run")
	require.Len(t, env.Log(k), runs, "nothing new in the thread's log")
	mu.Lock()
	require.Equal(t, []string{"sig-wake"}, sent)
	mu.Unlock()
}

// A signal that wakes an idle thread and then fails to reach the target closes the run
// its wake opened: the thread reads idle again at once, not active for the whole lease,
// and the next signal wakes it again.
func TestFailedWakeSignalClosesItsRun(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { failedWakeClosesRun(t, b) })
	}
}

func failedWakeClosesRun(t *testing.T, b storetest.Backend) {
	var fail atomic.Bool
	fail.Store(true)
	env := deliverytest.New(t, deliverytest.Config{
		Backend: &b,
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": {Kind: "webhook", Target: delivery.TargetFunc(
				func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
					if fail.Load() {
						return agent.Result{}, errors.New("POST http://hook/…: HTTP 404: Cannot POST …")
					}
					return agent.Result{}, nil
				})}}
		},
	})
	k := inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: "failed-wake"}
	body := map[string]any{"signal": map[string]any{"type": "user", "contents": "hi"}}
	require.Equal(t, http.StatusBadGateway, env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, nil))
	live, err := env.Runs.Live(t.Context(), k)
	require.NoError(t, err)
	require.Nil(t, live, "the failed wake left its run open")
	var runs []agent.Frame
	for _, f := range env.Log(k) {
		if f.Event == agent.EventRun {
			runs = append(runs, f)
		}
	}
	require.Len(t, runs, 2, "the run's opening and its close are in the thread's log")

	fail.Store(false)
	var again struct {
		Action agent.Behavior `json:"action"`
		RunID  string         `json:"runId"`
	}
	require.Equal(t, http.StatusOK, env.Do("POST", env.ThreadURL(k, "/signals"), env.Token(k), body, &again))
	require.Equal(t, agent.BehaviorWake, again.Action, "the thread is idle: the next signal wakes it")
	require.NotEmpty(t, again.RunID)
}
