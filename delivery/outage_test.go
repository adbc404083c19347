package delivery_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
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

// outage answers 503 while down (with an optional Retry-After) and hands deliveries to
// next once up. It counts calls per record, and refuses poison records even when up.
type outage struct {
	mu         sync.Mutex
	down       bool
	retryAfter time.Duration
	poison     map[string]bool // summaries refused with 500 whatever the state
	now        func() time.Time
	next       delivery.Target
	calls      int // every call
	downCalls  int // calls answered 503 for the outage
	perRecord  map[string]int
	firstOK    time.Time
}

func (o *outage) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	o.mu.Lock()
	o.calls++
	for _, id := range d.RecordIDs {
		o.perRecord[id]++
	}
	if o.poison[d.Signal.Contents] {
		o.mu.Unlock()
		return agent.Result{}, answered(500, true, 0)
	}
	if o.down {
		o.downCalls++
		o.mu.Unlock()
		return agent.Result{}, answered(503, true, o.retryAfter)
	}
	if o.firstOK.IsZero() {
		o.firstOK = o.now()
	}
	o.mu.Unlock()
	return o.next.Deliver(ctx, d)
}

func (o *outage) set(down bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = down
}

func (o *outage) stats() (calls, downCalls int, firstOK time.Time, perRecord map[string]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	per := make(map[string]int, len(o.perRecord))
	for k, v := range o.perRecord {
		per[k] = v
	}
	return o.calls, o.downCalls, o.firstOK, per
}

// logCount counts the messages logged at info or above.
type logCount struct {
	mu   sync.Mutex
	msgs map[string]int
}

func (l *logCount) Enabled(_ context.Context, lvl slog.Level) bool { return lvl >= slog.LevelInfo }
func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs[r.Message]++
	return nil
}
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }

func (l *logCount) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.msgs)
}

func outageEnv(t *testing.T, b storetest.Backend, o *outage, log *slog.Logger) *deliverytest.Env {
	e := deliverytest.New(t, deliverytest.Config{
		Logger:  log,
		Backend: &b,
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			o.next = stream
			r := delivery.RouteOf(agent.Config{ID: "coder", Target: agent.TargetConfig{Kind: "webhook"}}, o)
			r.Concurrency = 4
			return map[string]delivery.Route{"coder": r}
		},
	})
	o.now = e.Clock.Now
	return e
}

// advanceTo moves the fake clock to the earliest of the store's next due time and the
// given times that are still ahead.
func advanceTo(t *testing.T, e *deliverytest.Env, ahead ...time.Time) {
	t.Helper()
	now := e.Clock.Now()
	next, err := store.NewQueue(e.Store).NextDue(t.Context(), now)
	require.NoError(t, err)
	var target time.Time
	for _, c := range append(ahead, derefOr(next)) {
		if c.After(now) && (target.IsZero() || c.Before(target)) {
			target = c
		}
	}
	require.False(t, target.IsZero(), "nothing left to wait for")
	e.Clock.Advance(target.Sub(now))
}

func derefOr(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// A target failing for three hours, then recovering: nothing fails, the attempts made
// are about the probes (not records × attempts), and the whole backlog goes out, in
// order per thread, right after the first successful probe.
func TestOutageThreeHoursThenRecovery(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := &outage{down: true, perRecord: map[string]int{}}
			logs := &logCount{msgs: map[string]int{}}
			e := outageEnv(t, b, o, slog.New(logs))
			health := store.NewTargets(e.Store)
			start := e.Clock.Now()
			recoverAt := start.Add(3 * time.Hour)

			// 50 notifications across 5 threads, one every 3 minutes during the outage.
			const n, threads = 50, 5
			arrivals := make([]time.Time, n)
			for i := range arrivals {
				arrivals[i] = start.Add(time.Duration(i) * 3 * time.Minute)
			}
			ids := make([]string, 0, n)
			byThread := map[inbox.ThreadKey][]string{}
			for e.Clock.Now().Before(recoverAt) {
				now := e.Clock.Now()
				for len(ids) < n && !arrivals[len(ids)].After(now) {
					i := len(ids)
					k := key(fmt.Sprintf("t%d", i%threads))
					id := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci",
						Summary: fmt.Sprintf("n%02d", i), Priority: inbox.PriorityUrgent})
					ids = append(ids, id)
					byThread[k] = append(byThread[k], id)
				}
				e.Pass()
				ahead := []time.Time{recoverAt}
				if len(ids) < n {
					ahead = append(ahead, arrivals[len(ids)])
				}
				advanceTo(t, e, ahead...)
			}
			require.Len(t, ids, n)
			o.set(false)
			// Down until the next probe: no record has gone anywhere, none failed.
			for _, id := range ids {
				require.Equal(t, inbox.StatusPending, e.Record(id).Status)
			}
			st, err := health.TargetStates(t.Context())
			require.NoError(t, err)
			require.Len(t, st, 1)
			require.Equal(t, delivery.TargetDown, st[0].State)
			require.Contains(t, st[0].LastError, "503")
			backlog, err := health.Backlog(t.Context(), e.Clock.Now())
			require.NoError(t, err)
			require.Equal(t, n, backlog["coder"], "every record waits for the target, retried, put off or never tried")

			// The next probe succeeds; the backlog goes out in the same passes, at once.
			for {
				advanceTo(t, e)
				e.Pass()
				if _, _, ok, _ := o.stats(); !ok.IsZero() {
					break
				}
			}
			calls, downCalls, firstOK, perRecord := o.stats()
			require.Equal(t, e.Clock.Now(), firstOK, "no time passes between the probe and the backlog")
			require.False(t, firstOK.Before(recoverAt))
			require.Less(t, firstOK.Sub(recoverAt), agent.DefaultProbeInterval,
				"the first probe after recovery succeeds")
			for _, id := range ids {
				r := e.Record(id)
				require.Equal(t, inbox.StatusDelivered, r.Status, "record %+v", r)
				require.Equal(t, firstOK, *r.DeliveredAt)
			}
			for k, want := range byThread {
				var got []string
				for _, f := range e.Log(k) {
					if f.Event == agent.EventSignal {
						got = append(got, f.RecordIDs...)
					}
				}
				require.Equal(t, want, got, "thread %s in order", k)
			}
			// Attempts while down: the threshold, then one probe per interval.
			probes := int(3 * time.Hour / agent.DefaultProbeInterval)
			require.LessOrEqual(t, downCalls, agent.DefaultFailureThreshold+probes+1)
			// Fewer early on: a probe slot with no due record (the few first ones backing
			// off) sends nothing.
			require.GreaterOrEqual(t, downCalls, probes/2, "probes keep going")
			require.Equal(t, downCalls+n, calls, "each record is sent once after recovery")
			maxPer := 0
			for _, c := range perRecord {
				maxPer = max(maxPer, c)
			}
			// One line per transition; the attempts before it warn, the probes do not.
			msgs := logs.counts()
			require.Equal(t, 1, msgs["target down"])
			require.Equal(t, 1, msgs["target up"])
			require.LessOrEqual(t, msgs["delivery failed"], agent.DefaultFailureThreshold)
			st, err = health.TargetStates(t.Context())
			require.NoError(t, err)
			require.Equal(t, delivery.TargetUp, st[0].State)
			require.Equal(t, 0, st[0].Failures)
			t.Logf("%s: %d calls while down (%d probes at most), %d records, max %d attempts on one record, mean %.1f",
				b.Name, downCalls, probes, n, maxPer, float64(calls)/float64(n))
		})
	}
}

// untilDown runs passes until the target is down (threshold failures, backing off in between).
func untilDown(t *testing.T, e *deliverytest.Env) {
	t.Helper()
	for range 20 {
		e.Pass()
		st, err := store.NewTargets(e.Store).TargetStates(t.Context())
		require.NoError(t, err)
		if len(st) == 1 && st[0].State == delivery.TargetDown {
			return
		}
		advanceTo(t, e)
	}
	t.Fatal("target never went down")
}

// A record gives up only max_age after its first attempt (no attempt cap by default),
// and a probe's Retry-After moves the next probe.
func TestGiveUpByAgeAndRetryAfter(t *testing.T) {
	o := &outage{down: true, perRecord: map[string]int{}}
	e := outageEnv(t, storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}, o, nil)
	start := e.Clock.Now()
	id := e.Ingest(inbox.Notification{Thread: key("age"), Source: "github", Kind: "ci", Summary: "s", Priority: inbox.PriorityUrgent})
	untilDown(t, e)
	require.Equal(t, agent.DefaultFailureThreshold, e.Record(id).Attempts)
	require.Equal(t, start, *e.Record(id).FirstAttemptAt)

	// The target asks for 5 minutes: the next probe waits for it, not for the interval.
	o.mu.Lock()
	o.retryAfter = 5 * time.Minute
	o.mu.Unlock()
	for e.Record(id).Attempts == agent.DefaultFailureThreshold {
		advanceTo(t, e)
		e.Pass()
	}
	probed := e.Clock.Now()
	st, err := store.NewTargets(e.Store).TargetStates(t.Context())
	require.NoError(t, err)
	require.Equal(t, probed.Add(5*time.Minute), *st[0].NextProbeAt)
	e.Clock.Advance(5*time.Minute - time.Millisecond)
	e.Pass()
	require.Equal(t, agent.DefaultFailureThreshold+1, e.Record(id).Attempts, "no probe before the Retry-After")

	// A day of probes: still pending until 24h after the first attempt, then failed.
	for e.Clock.Now().Before(start.Add(agent.DefaultMaxAge)) {
		require.Equal(t, inbox.StatusPending, e.Record(id).Status, "at %s", e.Clock.Now().Sub(start))
		e.Pass()
		advanceTo(t, e)
	}
	e.Pass()
	r := e.Record(id)
	require.Equal(t, inbox.StatusFailed, r.Status)
	require.Greater(t, r.Attempts, 200, "probes are not capped by attempts")
	require.Contains(t, r.LastError, "503")
}

// A record the target keeps refusing (while accepting others) does not keep the target
// down: its backoff lets the next probe try another record.
func TestPoisonRecordDoesNotHoldTheTarget(t *testing.T) {
	o := &outage{poison: map[string]bool{}, perRecord: map[string]int{}}
	e := outageEnv(t, storetest.Backend{Name: "sqlite", Config: storetest.SQLiteConfig(t)}, o, nil)
	poisonN := inbox.Notification{Thread: key("poison"), Source: "github", Kind: "ci", Summary: "poison", Priority: inbox.PriorityUrgent}
	sig := agent.NotificationSignal(inbox.Record{Summary: "poison"}, "x", e.Clock.Now())
	o.poison[sig.Contents] = true
	bad := e.Ingest(poisonN)
	untilDown(t, e)
	good := e.Ingest(inbox.Notification{Thread: key("other"), Source: "github", Kind: "ci", Summary: "fine", Priority: inbox.PriorityUrgent})
	start := e.Clock.Now()
	for e.Record(good).Status != inbox.StatusDelivered {
		require.Less(t, e.Clock.Now().Sub(start), 3*agent.DefaultProbeInterval, "the good record waits a few probes at most")
		advanceTo(t, e)
		e.Pass()
	}
	require.Equal(t, inbox.StatusPending, e.Record(bad).Status, "the poison record keeps retrying")
	st, err := store.NewTargets(e.Store).TargetStates(t.Context())
	require.NoError(t, err)
	require.Equal(t, delivery.TargetUp, st[0].State)
}

// Two dispatchers on one database (two replicas) share the outage: one probe per
// interval between them, and either may see the recovery.
func TestReplicasShareProbes(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := &outage{down: true, perRecord: map[string]int{}}
			e := outageEnv(t, b, o, nil)
			health := store.NewTargets(e.Store)
			routes := map[string]delivery.Route{"coder": delivery.RouteOf(agent.Config{ID: "coder",
				Target: agent.TargetConfig{Kind: "webhook"}}, o)}
			other := delivery.New(store.NewQueue(e.Store), e.Runs, e.Broker, routes, service.Base{Logger: storetest.Logger(t), Now: e.Now},
				delivery.WithHealth(health), delivery.WithRandom(func() float64 { return 0.5 }))
			for i := range 10 {
				e.Ingest(inbox.Notification{Thread: key(fmt.Sprintf("r%d", i)), Source: "github", Kind: "ci",
					Summary: fmt.Sprintf("n%d", i), Priority: inbox.PriorityUrgent})
			}
			untilDown(t, e)
			_, before, _, _ := o.stats()
			const intervals = 20
			for range intervals {
				advanceTo(t, e)
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
			}
			_, after, _, _ := o.stats()
			require.Equal(t, intervals, after-before, "one probe per interval across both replicas")
			o.set(false)
			advanceTo(t, e)
			_, err := other.RunOnce(context.Background())
			require.NoError(t, err)
			e.Pass()
			_, err = other.RunOnce(context.Background())
			require.NoError(t, err)
			backlog, err := health.Backlog(t.Context(), e.Clock.Now())
			require.NoError(t, err)
			require.Zero(t, backlog["coder"])
		})
	}
}
