package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// answered is a receiver's refusal as an HTTP target reports it: its status, whether a
// later attempt may help and its Retry-After (0: none).
func answered(code int, retry bool, after time.Duration) error {
	return &agent.DeliveryError{Err: fmt.Errorf("webhook answered %d", code), Status: code, Retry: retry, RetryAfter: after}
}

// transient is a failure that may pass, without an answer (a transport error).
func transient(err error) error { return &agent.DeliveryError{Err: err, Retry: true} }

// flaky fails its first n deliveries with the errors given, then passes them on.
type flaky struct {
	mu   sync.Mutex
	errs []error
	next delivery.Target
	seen []agent.Handoff
}

func (f *flaky) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	f.mu.Lock()
	f.seen = append(f.seen, d)
	var err error
	if len(f.errs) > 0 {
		err, f.errs = f.errs[0], f.errs[1:]
	}
	f.mu.Unlock()
	if err != nil {
		return agent.Result{}, err
	}
	return f.next.Deliver(ctx, d)
}

func (f *flaky) deliveries() []agent.Handoff {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Handoff(nil), f.seen...)
}

func flakyEnv(t *testing.T, f *flaky, maxAttempts int) *deliverytest.Env {
	return deliverytest.New(t, deliverytest.Config{
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			f.next = stream
			return map[string]delivery.Route{"coder": {Kind: "webhook", Target: f, MaxAttempts: maxAttempts}}
		},
		Dispatch: []delivery.Option{delivery.WithSecrets([]string{"hunter2-secret"})},
	})
}

func TestRetriesBackoffAndDeadLetter(t *testing.T) {
	f := &flaky{errs: []error{
		answered(429, true, 30*time.Second),
		transient(errors.New(`Post "https://gw:hunter2-secret@agent.example/hook?token=abc": connection refused`)),
		answered(503, true, 0),
	}}
	e := flakyEnv(t, f, 3)
	k := key("retry")
	rec := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "CI failed", Priority: inbox.PriorityUrgent})
	start := e.Clock.Now()

	e.Pass()
	r := e.Record(rec)
	require.Equal(t, inbox.StatusPending, r.Status)
	require.Equal(t, 1, r.Attempts)
	require.Equal(t, start.Add(30*time.Second), *r.NextAttemptAt, "Retry-After honoured")
	require.Equal(t, "webhook answered 429", r.LastError)

	e.Clock.Advance(29 * time.Second)
	e.Pass()
	require.Len(t, f.deliveries(), 1, "not before Retry-After")

	e.Clock.Advance(time.Second)
	e.Pass()
	r = e.Record(rec)
	require.Equal(t, 2, r.Attempts)
	// Backoff after the second failure with jitter 0.5: [1s, 2s) → 1.5s.
	require.Equal(t, e.Clock.Now().Add(1500*time.Millisecond), *r.NextAttemptAt)
	require.Equal(t, `Post "https://xxxxx@agent.example/hook?token=xxxxx": connection refused`, r.LastError, "credentials redacted")

	e.Clock.Advance(1500 * time.Millisecond)
	e.Pass()
	r = e.Record(rec)
	require.Equal(t, inbox.StatusFailed, r.Status, "dead letter after max_attempts")
	require.Equal(t, 3, r.Attempts)
	require.Equal(t, "webhook answered 503", r.LastError)
	due, err := store.NewQueue(e.Store).NextDue(t.Context(), e.Clock.Now())
	require.NoError(t, err)
	require.NotNil(t, due) // the wake's run lease only
	require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease).Add(-31500*time.Millisecond), *due)

	seen := f.deliveries()
	require.Len(t, seen, 3)
	for i, d := range seen {
		require.Equal(t, seen[0].Signal.ID, d.Signal.ID, "the signal id is stable across retries")
		require.Equal(t, i+1, d.Attempt)
	}
	atts, err := store.NewAdmin(e.Store).ListAttempts(t.Context(), delivery.AttemptFilter{RecordID: rec})
	require.NoError(t, err)
	require.Len(t, atts, 3)
	require.Equal(t, []string{delivery.OutcomeFailed, delivery.OutcomeRetry, delivery.OutcomeRetry},
		[]string{atts[0].Outcome, atts[1].Outcome, atts[2].Outcome})
	require.Equal(t, []int{503, 0, 429}, []int{atts[0].StatusCode, atts[1].StatusCode, atts[2].StatusCode})
	require.Equal(t, "webhook", atts[0].Target)
	require.NotContains(t, atts[1].Error, "hunter2")
}

func TestPermanentFailureAndDeferral(t *testing.T) {
	f := &flaky{errs: []error{answered(400, false, 0)}}
	e := flakyEnv(t, f, 8)
	k := key("perm")
	bad := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "first", Priority: inbox.PriorityUrgent})
	good := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "second", Priority: inbox.PriorityHigh})
	e.Pass()
	require.Equal(t, inbox.StatusFailed, e.Record(bad).Status, "not retryable: failed at once")
	require.Equal(t, inbox.StatusDelivered, e.Record(good).Status, "a permanent failure does not hold the rest back")

	// A retryable failure defers the rest of the thread to the retry time.
	f2 := &flaky{errs: []error{answered(502, true, 0)}}
	e2 := flakyEnv(t, f2, 8)
	a := e2.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "a", Priority: inbox.PriorityUrgent})
	b := e2.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "b", Priority: inbox.PriorityHigh})
	e2.Pass()
	require.Len(t, f2.deliveries(), 1)
	require.Equal(t, 0, e2.Record(b).Attempts)
	e2.Clock.Advance(time.Second)
	e2.Pass()
	require.Equal(t, inbox.StatusDelivered, e2.Record(a).Status)
	require.Equal(t, inbox.StatusDelivered, e2.Record(b).Status)
	log := e2.Log(k)
	require.Equal(t, []string{a}, log[len(log)-2].RecordIDs, "order kept after the retry")
	require.Equal(t, []string{b}, log[len(log)-1].RecordIDs)
}

func TestNoTargetFails(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Routes: func(delivery.Target) map[string]delivery.Route { return nil }})
	id := e.Ingest(inbox.Notification{Thread: key("x"), Source: "github", Kind: "ci", Summary: "s"})
	e.Pass()
	r := e.Record(id)
	require.Equal(t, inbox.StatusFailed, r.Status)
	require.Equal(t, `agent "coder" has no delivery target configured`, r.LastError)
}

// crashingQueue commits the first n passes, then "crashes" before committing: the
// target already accepted the signals, the store never learns it.
type crashingQueue struct {
	delivery.Queue
	left atomic.Int32
}

func (q *crashingQueue) CompleteThread(ctx context.Context, owner string, o delivery.Outcome) error {
	if q.left.Add(-1) < 0 {
		return errors.New("process died")
	}
	return q.Queue.CompleteThread(ctx, owner, o)
}

// recorder remembers the signal ids a target was handed.
type recorder struct {
	mu  sync.Mutex
	ids []string
}

func (r *recorder) Deliver(_ context.Context, d agent.Handoff) (agent.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, d.Signal.ID)
	return agent.Result{}, nil
}

func recordingRoutes(r *recorder) func(delivery.Target) map[string]delivery.Route {
	return func(delivery.Target) map[string]delivery.Route {
		return map[string]delivery.Route{"coder": {Kind: "stream", Target: r}}
	}
}

// TestRestartMidBacklog: a process dies mid-backlog, after its target accepted signals
// but before recording it; a new one on the same database file delivers everything, each
// record's signal exactly once in the log, re-sending the lost ones with the same ids.
func TestRestartMidBacklog(t *testing.T) {
	backend := storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}
	before, after := &recorder{}, &recorder{}
	first := deliverytest.New(t, deliverytest.Config{
		Backend: &backend,
		Routes:  recordingRoutes(before),
		Queue: func(s *store.DB) delivery.Queue {
			q := &crashingQueue{Queue: store.NewQueue(s)}
			q.left.Store(2)
			return q
		},
		Dispatch: []delivery.Option{delivery.WithBatch(64, 1)},
	})
	const threads, perThread = 5, 8
	var records []string
	for th := range threads {
		for i := range perThread {
			records = append(records, first.Ingest(inbox.Notification{Thread: key(fmt.Sprint("t", th)), Source: "github",
				Kind: "ci", Summary: fmt.Sprint("r", th, "-", i), Priority: inbox.PriorityUrgent}))
		}
	}
	_, err := first.Dispatcher.RunOnce(t.Context())
	require.Error(t, err, "three of five threads crashed before commit")
	require.Len(t, before.ids, threads*perThread, "the target got everything before the crash")
	logged := 0
	for th := range threads {
		logged += len(first.Log(key(fmt.Sprint("t", th))))
	}
	require.Equal(t, 2*(perThread+1)+3, logged, "two threads committed; the others kept only their wake")
	require.NoError(t, first.Store.Close())

	// A new process, after the dead one's leases lapsed.
	second := deliverytest.New(t, deliverytest.Config{Backend: &backend, Routes: recordingRoutes(after)})
	second.Clock.Advance(delivery.DefaultLease)
	second.Pass()
	require.Len(t, after.ids, 3*perThread, "only what was never recorded is sent again")
	require.Subset(t, before.ids, after.ids, "with the same signal ids")
	seen := map[string]int{}
	for th := range threads {
		log := second.Log(key(fmt.Sprint("t", th)))
		require.Len(t, log, perThread+1, "no frame twice")
		require.Equal(t, agent.EventRun, log[0].Event)
		for i, f := range log {
			require.Equal(t, int64(i+1), f.Seq)
			for _, id := range f.RecordIDs {
				seen[id]++
			}
		}
	}
	for _, id := range records {
		require.Equal(t, 1, seen[id], "record %s", id)
		require.Equal(t, inbox.StatusDelivered, second.Record(id).Status)
	}
}

// TestLoopReactsWithoutTicks runs the real loop with a poll interval far beyond the test:
// every delivery below is caused by a notification or a presence change, not a tick.
func TestLoopReactsWithoutTicks(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{RealClock: true, Dispatch: []delivery.Option{
		delivery.WithPollInterval(time.Hour),
	}})
	e.Dispatcher.TestSignals.Pass.Init()
	require.NoError(t, e.Dispatcher.Start(t.Context()))
	require.Error(t, e.Dispatcher.Start(t.Context()), "started once")
	require.NoError(t, (<-e.Dispatcher.TestSignals.Pass.C()).Err) // the first pass at start

	k := key("loop")
	sub := e.Subscribe(k, "", "")
	run := e.OpenRun(k)
	require.Equal(t, "run", sub.Next(wait).Event)
	rec := create(t, e, k, comment("Review requested", inbox.PriorityHigh))
	ev := sub.Next(wait)
	require.Equal(t, agent.TagNotificationSummary, ev.Str("tagName"))

	e.FinishRun(k, run.ID)
	require.Equal(t, "finished", sub.Next(wait).Str("status"))
	require.Equal(t, "wake", sub.Next(wait).Str("origin"))
	ev = sub.Next(wait)
	require.Equal(t, "wake", ev.Str("action"))
	require.Equal(t, fullXML(rec.RecordID, inbox.PriorityHigh, "Review requested"), ev.Str("xml"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, e.Dispatcher.Stop(ctx))
}

// TestDeliverLogsOnce: a signal the API sends again with the same id is logged once and
// reaches the target once.
func TestDeliverLogsOnce(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := key("dup")
	sig := agent.Signal{ID: "sig-1", Type: agent.TypeReactive, TagName: "system-reminder", Contents: "x"}
	for i := range 3 {
		_, err := e.Dispatcher.Deliver(t.Context(), agent.Handoff{Thread: k, Signal: sig, Behavior: agent.BehaviorPersist})
		if i == 0 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, agent.ErrSignalLogged, "the caller learns the id was logged and nothing was sent")
		}
		require.False(t, agent.DeliveryFailure(err).Retry)
	}
	log := e.Log(k)
	require.Len(t, log, 1)
	require.Equal(t, "<system-reminder>x</system-reminder>", log[0].XML)
	atts, err := store.NewAdmin(e.Store).ListAttempts(t.Context(), delivery.AttemptFilter{SignalID: "sig-1"})
	require.NoError(t, err)
	require.Len(t, atts, 1, "a repeat of a logged id is not sent to the target again")
}

// TestStopDoesNotCountAttempts: a delivery cut short by Stop is not the target's failure;
// the record stays due with its attempt count untouched.
func TestStopDoesNotCountAttempts(t *testing.T) {
	started := make(chan struct{}, 1)
	blocking := delivery.TargetFunc(func(ctx context.Context, _ agent.Handoff) (agent.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return agent.Result{}, transient(ctx.Err())
	})
	e := deliverytest.New(t, deliverytest.Config{RealClock: true, Routes: func(delivery.Target) map[string]delivery.Route {
		return map[string]delivery.Route{"coder": {Kind: "webhook", Target: blocking}}
	}})
	require.NoError(t, e.Dispatcher.Start(t.Context()))
	id := e.Ingest(inbox.Notification{Thread: key("stop"), Source: "github", Kind: "ci", Summary: "s", Priority: inbox.PriorityUrgent})
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, e.Dispatcher.Stop(ctx))
	r := e.Record(id)
	require.Equal(t, inbox.StatusPending, r.Status)
	require.Zero(t, r.Attempts)
	require.Empty(t, r.LastError)
	atts, err := store.NewAdmin(e.Store).ListAttempts(ctx, delivery.AttemptFilter{RecordID: id})
	require.NoError(t, err)
	require.Empty(t, atts)
}

// TestAttemptsCountTheSuccess: a record delivered on its third attempt says 3, and the
// attempt log numbers its rows 1, 2, 3.
func TestAttemptsCountTheSuccess(t *testing.T) {
	cfg := deliverytest.Config{Routes: func(stream delivery.Target) map[string]delivery.Route {
		f := &flaky{errs: []error{answered(503, true, 0), answered(502, true, 0)}, next: stream}
		return map[string]delivery.Route{"coder": {Kind: "webhook", Target: f}}
	}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		first := e.Ingest(inbox.Notification{Thread: key("count"), Source: "github", Kind: "ci", Summary: "s", Priority: inbox.PriorityUrgent})
		for range 3 {
			e.Pass()
			if r := e.Record(first); r.NextAttemptAt != nil {
				e.Clock.Advance(r.NextAttemptAt.Sub(e.Clock.Now()))
			}
		}
		r := e.Record(first)
		require.Equal(t, inbox.StatusDelivered, r.Status)
		require.Equal(t, 3, r.Attempts)
		atts, err := store.NewAdmin(e.Store).ListAttempts(t.Context(), delivery.AttemptFilter{RecordID: first})
		require.NoError(t, err)
		require.Len(t, atts, 3)
		require.Equal(t, []int{3, 2, 1}, []int{atts[0].Attempt, atts[1].Attempt, atts[2].Attempt})

		// Delivered at the first try: 1, not 0.
		once := e.Ingest(inbox.Notification{Thread: key("count"), Source: "github", Kind: "ci", Summary: "t", Priority: inbox.PriorityUrgent})
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(once).Status)
		require.Equal(t, 1, e.Record(once).Attempts)
	})
}

// TestPassStopsAtHalfLease: a pass whose sends use up half the thread's lease sends no
// more under it; the rest stays due and a later pass delivers each record exactly once.
func TestPassStopsAtHalfLease(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	sentIDs := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sent...)
	}
	cfg := deliverytest.Config{EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
		slow := delivery.TargetFunc(func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
			mu.Lock()
			sent = append(sent, d.RecordIDs...)
			first := len(sent) == 1
			mu.Unlock()
			if first {
				e.Clock.Advance(delivery.DefaultLease/2 + time.Second)
			}
			return e.Stream.Deliver(ctx, d)
		})
		return map[string]delivery.Route{"coder": {Kind: "webhook", Target: slow}}
	}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		mu.Lock()
		sent = nil
		mu.Unlock()
		k := key("lease")
		var ids []string
		for i := range 3 {
			ids = append(ids, e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci",
				Summary: fmt.Sprintf("s%d", i), Priority: inbox.PriorityUrgent}))
		}
		n, err := e.Dispatcher.RunOnce(t.Context())
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Len(t, sentIDs(), 1, "nothing is sent past half the lease")
		pending := 0
		for _, id := range ids {
			if r := e.Record(id); r.Status == inbox.StatusPending {
				require.Zero(t, r.Attempts, "postponed, not attempted")
				pending++
			}
		}
		require.Equal(t, 2, pending)

		e.Pass()
		require.ElementsMatch(t, ids, sentIDs(), "each record reaches the target exactly once")
		for _, id := range ids {
			require.Equal(t, inbox.StatusDelivered, e.Record(id).Status)
		}
		signals := 0
		for _, f := range e.Log(k) {
			if f.Event == agent.EventSignal {
				signals++
			}
		}
		require.Equal(t, 3, signals)
	})
}
