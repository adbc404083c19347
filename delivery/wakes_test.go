package delivery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

func wakeAgents(budget *agent.WakeBudget, limit int) []agent.Config {
	return []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream},
		WakeBudget: budget, MaxConcurrentWakes: limit}}
}

// wakes counts the runs the gateway opened on k (run frames of origin wake, status open).
func wakes(e *deliverytest.Env, k inbox.ThreadKey) int {
	n := 0
	for _, f := range e.Log(k) {
		if f.Event == agent.EventRun && f.RunStatus == agent.RunOpen && f.Origin == agent.OriginWake {
			n++
		}
	}
	return n
}

// finishLive finishes the thread's live run, so the next record finds it idle.
func finishLive(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey) {
	t.Helper()
	run, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.NotNil(t, run, "the thread has a live run")
	e.FinishRun(k, run.ID)
}

// The wake budget end to end through the stream target: two wakes per hour; the third
// medium record on the idle thread is held for the next summary, which is logged
// without waking; urgent records and messages still wake; an hour later the budget
// has room again.
func TestWakeBudgetThroughStream(t *testing.T) {
	budget := &agent.WakeBudget{Max: 2, Per: time.Hour}
	forBackends(t, deliverytest.Config{Agents: wakeAgents(budget, 0)}, func(t *testing.T, e *deliverytest.Env) {
		k := key("budget")
		sub := e.Subscribe(k, "", "")
		for i := range 2 {
			rec := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Summary: fmt.Sprintf("c%d", i)})
			e.Pass()
			ev := sub.Next(wait)
			require.Equal(t, "run", ev.Event)
			require.Equal(t, "wake", ev.Str("origin"))
			ev = sub.Next(wait)
			require.Equal(t, "wake", ev.Str("action"))
			require.Equal(t, inbox.StatusDelivered, e.Record(rec).Status)
			finishLive(t, e, k)
			require.Equal(t, "run", sub.Next(wait).Event)
			e.Clock.Advance(time.Minute)
		}
		held := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Summary: "third", Priority: inbox.PriorityHigh})
		e.Pass()
		r := e.Record(held)
		require.Equal(t, inbox.StatusPending, r.Status, "held, not delivered")
		require.Contains(t, r.Reason, "wake budget 2/1h spent")
		require.Equal(t, inbox.ActionSummarize, r.Action)
		require.False(t, r.FullWhenIdle, "a held record does not wait to wake the thread later")
		ev := sub.Next(wait)
		require.Equal(t, "signal", ev.Event)
		require.Equal(t, string(agent.BehaviorPersist), ev.Str("action"), "the summary is logged without waking")
		require.Equal(t, agent.TagNotificationSummary, ev.Str("tagName"))
		require.NotEmpty(t, e.Record(held).SummarySignal)
		require.Equal(t, 2, wakes(e, k))

		// Urgent and messages wake whatever the budget.
		urgent := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "security", Summary: "CVE", Priority: inbox.PriorityUrgent})
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(urgent).Status)
		require.Equal(t, 3, wakes(e, k))
		finishLive(t, e, k)
		msg := e.Ingest(inbox.Notification{Thread: k, Source: "slack", Kind: "dm", Summary: "hi", DeliverAs: inbox.DeliverAsMessage})
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(msg).Status)
		require.Equal(t, 4, wakes(e, k))
		finishLive(t, e, k)

		// The window slides: an hour after the first two wakes, one more is allowed.
		e.Clock.Advance(time.Hour)
		again := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Summary: "later"})
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(again).Status)
		require.Equal(t, 5, wakes(e, k))
	})
}

// A restart keeps the budget: a new presence service and dispatcher over the same
// database still find it spent, and the held record still goes to a summary.
func TestWakeBudgetSurvivesRestart(t *testing.T) {
	budget := &agent.WakeBudget{Max: 1, Per: time.Hour}
	agents := wakeAgents(budget, 0)
	forBackends(t, deliverytest.Config{Agents: agents}, func(t *testing.T, e *deliverytest.Env) {
		k := key("restart")
		e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Summary: "first"})
		e.Pass()
		finishLive(t, e, k)
		require.Equal(t, 1, wakes(e, k))

		runs := agent.NewRuns(store.NewRuns(e.Store), e.Broker, agents, agent.WithRunsClock(e.Now))
		restarted := delivery.New(store.NewQueue(e.Store), runs, e.Broker, delivery.StreamRoutes(agents, e.Stream),
			service.Base{Logger: storetest.Logger(t), Now: e.Now})
		held := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "comment", Summary: "second"})
		for range 3 {
			_, err := restarted.RunOnce(context.Background())
			require.NoError(t, err)
		}
		require.Equal(t, 1, wakes(e, k), "the budget outlives the process")
		r := e.Record(held)
		require.Contains(t, r.Reason, "wake budget 1/1h spent")
		require.NotEmpty(t, r.SummarySignal, "the held record reached the next summary")
	})
}

// max_concurrent_wakes through the stream target: with two slots taken, the waiting
// threads are served most urgent first, then oldest, and each finished wake run lets
// exactly the next one in. Nothing is lost or doubled.
func TestMaxConcurrentWakesThroughStream(t *testing.T) {
	forBackends(t, deliverytest.Config{Agents: wakeAgents(nil, 2)}, func(t *testing.T, e *deliverytest.Env) {
		ids := map[string]string{}
		ingest := func(name string, pr inbox.Priority) {
			ids[name] = e.Ingest(inbox.Notification{Thread: key(name), Source: "github", Kind: "comment", Summary: name, Priority: pr})
			e.Clock.Advance(time.Second)
			e.Pass()
		}
		delivered := func() []string {
			var out []string
			for _, name := range []string{"t0", "t1", "t2", "t3", "t4"} {
				if id, ok := ids[name]; ok && e.Record(id).Status == inbox.StatusDelivered {
					out = append(out, name)
				}
			}
			return out
		}
		ingest("t0", inbox.PriorityMedium)
		ingest("t1", inbox.PriorityMedium)
		ingest("t2", inbox.PriorityMedium)
		ingest("t3", inbox.PriorityMedium)
		ingest("t4", inbox.PriorityUrgent) // arrives last, waits first
		require.Equal(t, []string{"t0", "t1"}, delivered(), "two slots")
		// A new record on a waiting thread keeps the thread's place.
		ingest("t3", inbox.PriorityMedium)
		require.Equal(t, []string{"t0", "t1"}, delivered())
		finishLive(t, e, key("t0"))
		e.Pass()
		require.Equal(t, []string{"t0", "t1", "t4"}, delivered(), "one slot freed: the urgent waiter in")
		finishLive(t, e, key("t1"))
		e.Pass()
		require.Equal(t, []string{"t0", "t1", "t2", "t4"}, delivered(), "then the oldest")
		finishLive(t, e, key("t4"))
		e.Pass()
		require.Equal(t, []string{"t0", "t1", "t2", "t3", "t4"}, delivered())
		for _, name := range []string{"t0", "t1", "t2", "t3", "t4"} {
			require.Equal(t, 1, wakes(e, key(name)), "%s woken once", name)
		}
		st, err := store.NewExplain(e.Store).WakeState(context.Background(), key("t3"), e.Clock.Now())
		require.NoError(t, err)
		require.Nil(t, st.QueuedAt, "served waiters leave the queue")
		require.Equal(t, 2, st.OpenWakes)
	})
}

// A run that is never finished frees its slot when its lease lapses: the waiters are
// looked at again by then at the latest, without a close to promote them.
func TestQueuedWakeLooksAgainAtLeaseExpiry(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: wakeAgents(nil, 1)})
	a := e.Ingest(inbox.Notification{Thread: key("a"), Source: "github", Kind: "comment", Summary: "a"})
	e.Pass()
	b := e.Ingest(inbox.Notification{Thread: key("b"), Source: "github", Kind: "comment", Summary: "b"})
	e.Pass()
	require.Equal(t, inbox.StatusDelivered, e.Record(a).Status)
	require.Equal(t, inbox.StatusPending, e.Record(b).Status)
	next, err := store.NewQueue(e.Store).NextDue(context.Background(), e.Clock.Now())
	require.NoError(t, err)
	require.NotNil(t, next)
	require.False(t, next.After(e.Clock.Now().Add(agent.DefaultRunLease)), "the waiter is due again by the run lease")
	e.Clock.Advance(agent.DefaultRunLease)
	e.Pass()
	require.Equal(t, inbox.StatusDelivered, e.Record(b).Status)
}

// Replicas share the cap: two dispatchers on one database, passing at the same time over
// a backlog of 30 idle threads, never hold more than max_concurrent_wakes runs open,
// and every record is delivered exactly once as runs finish.
func TestMaxConcurrentWakesAcrossReplicas(t *testing.T) {
	const limit, threads = 3, 30
	agents := wakeAgents(nil, limit)
	forBackends(t, deliverytest.Config{Agents: agents}, func(t *testing.T, e *deliverytest.Env) {
		runs := agent.NewRuns(store.NewRuns(e.Store), e.Broker, agents, agent.WithRunsClock(e.Now))
		other := delivery.New(store.NewQueue(e.Store), runs, e.Broker, delivery.StreamRoutes(agents, e.Stream),
			service.Base{Logger: storetest.Logger(t), Now: e.Now})
		ids := make([]string, threads)
		for i := range threads {
			ids[i] = e.Ingest(inbox.Notification{Thread: key(fmt.Sprintf("r%02d", i)), Source: "github", Kind: "comment",
				Summary: fmt.Sprintf("n%d", i)})
		}
		for round := 0; ; round++ {
			require.Less(t, round, threads, "the backlog drains")
			var wg sync.WaitGroup
			for _, d := range []*delivery.Dispatcher{e.Dispatcher, other} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := d.RunOnce(context.Background())
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			live, err := e.Runs.LiveThreads(context.Background(), "coder")
			require.NoError(t, err)
			require.LessOrEqual(t, len(live), limit, "never more wake runs open than the cap")
			if len(live) == 0 {
				break
			}
			for _, k := range live {
				finishLive(t, e, k)
			}
		}
		for i, id := range ids {
			require.Equal(t, inbox.StatusDelivered, e.Record(id).Status, "record %d", i)
			require.Equal(t, 1, wakes(e, key(fmt.Sprintf("r%02d", i))))
		}
	})
}

// A waiting thread whose agent opens a run itself needs no wake: the pass that delivers
// into that run takes it out of the queue and hands its turn to the next waiter, so a
// thread that no longer waits never holds a place.
func TestWakeWaiterThatNeedsNoWakeLeavesTheQueue(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: wakeAgents(nil, 1)})
	a := e.Ingest(inbox.Notification{Thread: key("a"), Source: "github", Kind: "comment", Summary: "a"})
	e.Pass()
	b := e.Ingest(inbox.Notification{Thread: key("b"), Source: "github", Kind: "comment", Summary: "b"})
	e.Clock.Advance(time.Second)
	e.Pass()
	c := e.Ingest(inbox.Notification{Thread: key("c"), Source: "github", Kind: "comment", Summary: "c"})
	e.Pass()
	require.Equal(t, inbox.StatusDelivered, e.Record(a).Status)
	require.Equal(t, inbox.StatusPending, e.Record(b).Status)
	require.Equal(t, inbox.StatusPending, e.Record(c).Status)

	runB := e.OpenRun(key("b")) // b's agent starts working on its own
	finishLive(t, e, key("a"))  // a's slot goes to b, the first waiter...
	e.Pass()                    // ...which delivers into its own run, and passes the turn on
	require.Equal(t, inbox.StatusDelivered, e.Record(b).Status)
	require.Zero(t, wakes(e, key("b")), "b was never woken")
	e.Pass()
	require.Equal(t, inbox.StatusDelivered, e.Record(c).Status, "c got the slot b did not need")
	require.Equal(t, 1, wakes(e, key("c")))
	e.FinishRun(key("b"), runB.ID)
	for _, k := range []string{"a", "b", "c"} {
		st, err := store.NewExplain(e.Store).WakeState(context.Background(), key(k), e.Clock.Now())
		require.NoError(t, err)
		require.Nil(t, st.QueuedAt, "%s is not waiting", k)
	}
}
