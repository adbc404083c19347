package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// hangGuard only bounds a test that would otherwise hang; no assertion depends on it.
const hangGuard = 10 * time.Second

var coder = inbox.ThreadKey{Agent: "coder", Resource: "ops", Thread: "standup"}

// fixture is a gateway's agent side on one database (deliverytest), with a fake clock.
type fixture struct {
	t   *testing.T
	env *deliverytest.Env
	b   storetest.Backend
}

func newFixture(t *testing.T, b storetest.Backend, at time.Time) *fixture {
	env := deliverytest.New(t, deliverytest.Config{Backend: &b})
	env.Clock.Advance(at.Sub(env.Clock.Now()))
	return &fixture{t: t, env: env, b: b}
}

// set moves the fake clock to at.
func (f *fixture) set(at time.Time) { f.env.Clock.Advance(at.Sub(f.env.Clock.Now())) }

// replica is one gateway's schedule service and scheduler; a replica after the first
// has its own connections to the database.
func (f *fixture) replica(config []schedule.Spec, send schedule.Sender, opts ...schedule.Option) (*schedule.Service, *schedule.Scheduler) {
	var st schedule.Store = store.NewSchedules(f.env.Store)
	if f.b.Name == store.DriverPostgres {
		st = store.NewSchedules(storetest.Open(f.t, f.b))
	}
	if send == nil {
		send = f.env.Agents
	}
	base := service.Base{Now: f.env.Now}
	svc := schedule.NewService(st, send, []string{"coder", "support"}, base)
	return svc, schedule.NewScheduler(svc, config, base, opts...)
}

// start is a replica as a start leaves it, config synced; tests drive its passes
// (RunOnce) instead of its loop.
func (f *fixture) start(config []schedule.Spec, send schedule.Sender) *schedule.Scheduler {
	svc, sch := f.replica(config, send)
	require.NoError(f.t, svc.SyncConfig(f.t.Context(), config))
	return sch
}

// signals is the thread's logged signals' ids.
func (f *fixture) signals(k inbox.ThreadKey) []string {
	var out []string
	for _, fr := range f.env.Log(k) {
		if fr.Event == agent.EventSignal {
			out = append(out, fr.Signal.ID)
		}
	}
	return out
}

func spec(id, cron string) schedule.Spec {
	return schedule.Spec{ID: id, Agent: coder.Agent, ResourceID: coder.Resource, ThreadID: coder.Thread, Cron: cron,
		Contents: "time for the standup", IfIdle: schedule.IfIdle{Behavior: agent.BehaviorPersist}}
}

func forEachBackend(t *testing.T, fn func(t *testing.T, b storetest.Backend)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, b) })
	}
}

// A config schedule fires on its cron as one signal, sent as POST …/signals sends it:
// id schedule:{id}:{fireTime}, the type, tag, attributes and options given, the thread's
// log keeping it once. The loop is driven by the test (no sleeping).
func TestSchedulerFiresAsSignals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, utc("2026-11-02T08:59:30Z"))
		sp := spec("standup", "0 9 * * 1-5")
		sp.Attributes = map[string]any{"team": "core", "n": 3}
		tick := make(chan struct{})
		_, sch := f.replica([]schedule.Spec{sp}, nil, schedule.WithWait(func(ctx context.Context, _ time.Duration) bool {
			select {
			case <-ctx.Done():
				return false
			case <-tick:
				return true
			}
		}))
		sch.TestSignals.Pass.Init()
		require.NoError(t, sch.Start(t.Context()))
		t.Cleanup(func() { require.NoError(t, sch.Stop(context.Background())) })
		next := func() schedule.Pass {
			select {
			case p := <-sch.TestSignals.Pass.C():
				require.NoError(t, p.Err)
				return p
			case <-time.After(hangGuard):
				t.Fatal("no scheduler pass")
			}
			return schedule.Pass{}
		}
		require.Empty(t, next().Fired, "nothing is due before 09:00")

		f.set(utc("2026-11-02T09:00:00Z"))
		tick <- struct{}{}
		require.Equal(t, []string{"schedule:standup:2026-11-02T09:00:00Z"}, next().Fired)
		tick <- struct{}{}
		require.Empty(t, next().Fired, "a fire goes once")

		log := f.env.Log(coder)
		require.Len(t, log, 1)
		sig := log[0].Signal
		require.Equal(t, "schedule:standup:2026-11-02T09:00:00Z", sig.ID)
		require.Equal(t, agent.TypeNotification, sig.Type)
		require.Equal(t, "schedule", sig.TagName)
		require.Equal(t, "time for the standup", sig.Contents)
		require.Equal(t, "core", sig.Attributes.String("team"))
		require.Equal(t, agent.BehaviorPersist, log[0].Behavior, "ifIdle.behavior: persist")
		require.Equal(t, utc("2026-11-02T09:00:00Z"), sig.CreatedAt.UTC())
		raw, _ := json.Marshal(sig.Metadata["schedule"])
		require.JSONEq(t, `{"id":"standup","fireTime":"2026-11-02T09:00:00Z"}`, string(raw))

		// The clock jumps to Friday: Tuesday to Thursday were missed (more than a minute
		// late), Friday's is on time.
		f.set(utc("2026-11-06T09:00:00Z"))
		tick <- struct{}{}
		require.Equal(t, []string{"schedule:standup:2026-11-06T09:00:00Z"}, next().Fired)
		require.Len(t, f.env.Log(coder), 2)
	})
}

// A fire missed while no gateway ran is skipped; with catch_up: last the latest one is
// sent once at start. A restart after a fire sends nothing again.
func TestSchedulerMissedFires(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, utc("2026-11-02T08:30:00Z"))
		skip := spec("skip", "0 * * * *")
		last := spec("last", "0 * * * *")
		last.CatchUp = schedule.CatchUpLast
		config := []schedule.Spec{skip, last}
		first := f.start(config, nil)
		require.Empty(t, first.RunOnce(t.Context()).Fired)

		// Down from 08:30 to 13:20: 09:00 … 13:00 were missed.
		f.set(utc("2026-11-02T13:20:00Z"))
		restarted := f.start(config, nil)
		p := restarted.RunOnce(t.Context())
		require.NoError(t, p.Err)
		require.Equal(t, []string{"schedule:last:2026-11-02T13:00:00Z"}, p.Fired)
		require.Equal(t, []string{"skip"}, p.Skipped)
		require.Equal(t, []string{"schedule:last:2026-11-02T13:00:00Z"}, f.signals(coder),
			"catch_up: last sends the latest missed fire once; none skips them")

		again := f.start(config, nil)
		require.Empty(t, again.RunOnce(t.Context()).Fired)
		require.Len(t, f.signals(coder), 1, "a restart fires nothing twice")
		svc, _ := f.replica(config, nil)
		for _, id := range []string{"skip", "last"} {
			sc, err := svc.Get(t.Context(), id)
			require.NoError(t, err)
			require.Equal(t, utc("2026-11-02T14:00:00Z"), *sc.NextFireAt, id)
		}
	})
}

// crashAfterSend sends, then fails as a replica dying before it records the fire would.
type crashAfterSend struct{ schedule.Sender }

func (c crashAfterSend) SendSignal(ctx context.Context, k inbox.ThreadKey, req agent.SignalRequest) (agent.SignalResult, error) {
	if _, err := c.Sender.SendSignal(ctx, k, req); err != nil {
		return agent.SignalResult{}, err
	}
	return agent.SignalResult{}, errors.New("replica died")
}

// A replica that sent a fire and died before recording it leaves a claim; once the
// claim lapses another replica sends the fire again under the same id, and the thread's
// log keeps it once.
func TestSchedulerCrashMidFireSendsOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, utc("2026-11-02T08:59:00Z"))
		config := []schedule.Spec{spec("every5", "*/5 * * * *")}
		dying := f.start(config, crashAfterSend{f.env.Agents})
		f.set(utc("2026-11-02T09:00:00Z"))
		p := dying.RunOnce(t.Context())
		require.ErrorContains(t, p.Err, "replica died")
		require.Equal(t, []string{"schedule:every5:2026-11-02T09:00:00Z"}, f.signals(coder))

		other := f.start(config, nil)
		f.set(utc("2026-11-02T09:01:00Z"))
		require.Empty(t, other.RunOnce(t.Context()).Fired, "the claim holds for its lease")
		f.set(utc("2026-11-02T09:02:30Z"))
		p = other.RunOnce(t.Context())
		require.NoError(t, p.Err)
		require.Equal(t, []string{"schedule:every5:2026-11-02T09:00:00Z"}, p.Fired, "the lapsed claim's fire, again")
		require.Equal(t, []string{"schedule:every5:2026-11-02T09:00:00Z"}, f.signals(coder), "the thread keeps it once")

		f.set(utc("2026-11-02T09:05:00Z"))
		require.Equal(t, []string{"schedule:every5:2026-11-02T09:05:00Z"}, other.RunOnce(t.Context()).Fired)
	})
}

// Several replicas on one database race for every fire: each fire is sent by one.
func TestSchedulerReplicasFireOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, utc("2026-11-02T08:59:59Z"))
		config := []schedule.Spec{spec("tick", "*/10 * * * * *"), spec("tock", "5/10 * * * * *")}
		var replicas []*schedule.Scheduler
		for range 3 {
			replicas = append(replicas, f.start(config, nil))
		}
		var want []string
		fired := map[string]int{}
		for i := range 12 {
			at := utc("2026-11-02T09:00:00Z").Add(time.Duration(i*5) * time.Second)
			f.set(at)
			id := schedule.FireID("tick", at)
			if i%2 == 1 {
				id = schedule.FireID("tock", at)
			}
			want = append(want, id)
			passes := make([]schedule.Pass, len(replicas))
			var wg sync.WaitGroup
			for j, r := range replicas {
				wg.Go(func() { passes[j] = r.RunOnce(context.Background()) })
			}
			wg.Wait()
			for _, p := range passes {
				require.NoError(t, p.Err)
				for _, id := range p.Fired {
					fired[id]++
				}
			}
		}
		for _, id := range want {
			require.Equal(t, 1, fired[id], id)
		}
		require.Len(t, fired, len(want))
		require.ElementsMatch(t, want, f.signals(coder))
	})
}

// On the injected clock, across both of Europe/Berlin's 2026 transitions: a daily 02:30
// skips the spring day (no such time) and fires once on the autumn day.
func TestSchedulerAcrossDaylightSaving(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		for _, days := range [][2]string{
			{"2026-03-27T12:00:00Z", "2026-03-31T12:00:00Z"},
			{"2026-10-23T12:00:00Z", "2026-10-27T12:00:00Z"},
		} {
			if b.Name == store.DriverSQLite {
				b.Config = storetest.SQLiteConfig(t) // a database of its own: the last one is still open
			}
			f := newFixture(t, b, utc(days[0]))
			sp := spec("night-"+days[0][5:7], "30 2 * * *")
			sp.Timezone = "Europe/Berlin"
			sch := f.start([]schedule.Spec{sp}, nil)
			svc, _ := f.replica(nil, nil)
			for {
				sc, err := svc.Get(t.Context(), sp.ID)
				require.NoError(t, err)
				if sc.NextFireAt.After(utc(days[1])) {
					break
				}
				f.set(*sc.NextFireAt)
				require.NoError(t, sch.RunOnce(t.Context()).Err)
			}
			var got []string
			for _, id := range f.signals(coder) {
				if at, ok := strings.CutPrefix(id, "schedule:"+sp.ID+":"); ok {
					got = append(got, at)
				}
			}
			want := map[string][]string{
				"03": {"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"},
				"10": {"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"},
			}[days[0][5:7]]
			require.Equal(t, want, got)
		}
	})
}

// What one replica does through the API holds on the others at their next pass (each
// passes every second): a schedule made on one fires from another; paused on one, no
// replica fires it; resumed, it fires from its next fire on.
func TestScheduleChangesHoldOnEveryReplica(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storetest.Backend) {
		f := newFixture(t, b, utc("2026-11-02T08:59:00Z"))
		a, _ := f.replica(nil, nil)
		_, onB := f.replica(nil, nil)
		_, onC := f.replica(nil, nil)
		_, err := a.Create(t.Context(), spec("minutely", "* * * * *"))
		require.NoError(t, err)
		f.set(utc("2026-11-02T09:00:00Z"))
		require.Equal(t, []string{"schedule:minutely:2026-11-02T09:00:00Z"}, onB.RunOnce(t.Context()).Fired)

		_, err = a.Pause(t.Context(), "minutely")
		require.NoError(t, err)
		f.set(utc("2026-11-02T09:01:00Z"))
		require.Empty(t, onB.RunOnce(t.Context()).Fired)
		require.Empty(t, onC.RunOnce(t.Context()).Fired)

		f.set(utc("2026-11-02T09:02:30Z"))
		_, err = a.Resume(t.Context(), "minutely")
		require.NoError(t, err)
		f.set(utc("2026-11-02T09:03:00Z"))
		require.Equal(t, []string{"schedule:minutely:2026-11-02T09:03:00Z"}, onC.RunOnce(t.Context()).Fired,
			"09:01 and 09:02 fell in the pause")
		require.Equal(t, []string{"schedule:minutely:2026-11-02T09:00:00Z", "schedule:minutely:2026-11-02T09:03:00Z"}, f.signals(coder))

		_, err = a.Delete(t.Context(), "minutely")
		require.NoError(t, err)
		f.set(utc("2026-11-02T09:04:00Z"))
		require.Empty(t, onB.RunOnce(t.Context()).Fired)
	})
}
