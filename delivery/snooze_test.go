package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
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

// snooze posts POST …/notifications/{id}/snooze and returns the status and record.
func snooze(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, id string, body any) (int, inbox.Record) {
	t.Helper()
	var out inbox.Record
	status := e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+id+"/snooze"), e.Token(k), body, &out)
	return status, out
}

func until(t time.Time) map[string]any { return map[string]any{"until": t.UTC().Format(time.RFC3339)} }

// A snoozed record is neither delivered nor summarised while the thread is idle or
// active; an update meanwhile stays snoozed with it; at its time it is decided again with
// the presence of that moment (the thread is busy now: a summary, not the wake it would
// have had), once, through the passes of the loop's clock.
func TestSnoozeThroughStream(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("snooze")
		body := comment("Jane asked for a review", inbox.PriorityMedium)
		body["coalesceKey"] = "acme/api#7"
		rec := create(t, e, k, body)
		at := e.Clock.Now().Add(4 * time.Minute) // inside the run lease opened below
		status, got := snooze(t, e, k, rec.RecordID, until(at))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, inbox.StatusSnoozed, got.Status)
		require.Equal(t, at, *got.SnoozedUntil)
		e.Pass()
		require.Empty(t, e.Log(k), "idle: no wake, no frame")

		var page agent.InboxPage
		require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications"), e.Token(k), nil, &page))
		require.Empty(t, page.Notifications, "not in the default listing")
		require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications?status=snoozed"), e.Token(k), nil, &page))
		require.Len(t, page.Notifications, 1)
		require.Equal(t, rec.RecordID, page.Notifications[0].ID)

		run := e.OpenRun(k)
		body["summary"] = "Jane asked again"
		again := create(t, e, k, body)
		require.True(t, again.Merged)
		require.Equal(t, rec.RecordID, again.RecordID)
		e.Clock.Advance(time.Minute) // well past the summary interval
		e.Pass()
		require.Empty(t, signalsOf(e, k, 0), "active: not summarised")

		e.Clock.Advance(3 * time.Minute) // the snooze ends
		e.Pass()
		sigs := signalsOf(e, k, 0)
		require.Len(t, sigs, 1)
		require.Equal(t, agent.TagNotificationSummary, sigs[0].Signal.TagName, "decided with the presence of now: active")
		require.Equal(t, run.ID, sigs[0].RunID)
		r := e.Record(rec.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status)
		require.Equal(t, 2, r.CoalescedCount)
		require.Contains(t, r.Reason, "snooze ended; default: medium priority, thread active")

		e.FinishRun(k, run.ID)
		e.Pass()
		e.Clock.Advance(time.Hour)
		e.Pass()
		require.Len(t, signalsOf(e, k, 0), 1, "released once: the summarised details stay in the inbox")
	})
}

// The agent API refuses what a careless client sends: no, a past, an unparsable or a far
// time (400 naming until), a record not pending (409), one of another thread (404).
func TestSnoozeRefusals(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := key("refusals")
	rec := create(t, e, k, comment("x", inbox.PriorityLow))
	now := e.Clock.Now()
	for name, body := range map[string]any{
		"missing":      map[string]any{},
		"past":         until(now.Add(-time.Second)),
		"now":          until(now),
		"over 30 days": until(now.Add(inbox.MaxSnooze + time.Second)),
		"not a time":   map[string]any{"until": "tomorrow"},
		"a number":     map[string]any{"until": 1767225600},
	} {
		var out struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		status := e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+rec.RecordID+"/snooze"), e.Token(k), body, &out)
		require.Equal(t, http.StatusBadRequest, status, name)
		require.Contains(t, out.Error.Message, "until", name)
	}
	require.Equal(t, inbox.StatusPending, e.Record(rec.RecordID).Status)

	status, _ := snooze(t, e, key("other"), rec.RecordID, until(now.Add(time.Hour)))
	require.Equal(t, http.StatusNotFound, status)
	status, _ = snooze(t, e, k, rec.RecordID, until(now.Add(inbox.MaxSnooze)))
	require.Equal(t, http.StatusOK, status, "30 days exactly")
	status, _ = snooze(t, e, k, rec.RecordID, until(now.Add(time.Hour)))
	require.Equal(t, http.StatusConflict, status, "already snoozed")
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+rec.RecordID+"/dismiss"), e.Token(k), nil, nil))
	r := e.Record(rec.RecordID)
	require.Equal(t, inbox.StatusDismissed, r.Status, "a snoozed record can be dismissed")
	require.Nil(t, r.SnoozedUntil)
	status, _ = snooze(t, e, k, rec.RecordID, until(now.Add(time.Hour)))
	require.Equal(t, http.StatusConflict, status, "dismissed")
}

// replica is one more gateway process on the Env's database: its own store handle,
// inbox and dispatcher, on the same clock, stream and log broker.
type replica struct {
	store      *store.DB
	inbox      *inbox.Service
	dispatcher *delivery.Dispatcher
}

func newReplica(t *testing.T, e *deliverytest.Env, b storetest.Backend, agents []agent.Config) *replica {
	// SQLite serves one process per database file: there a replica is another inbox and
	// dispatcher over the same store.
	r := &replica{store: e.Store}
	if b.Config.Driver == store.DriverPostgres {
		r.store = storetest.Open(t, b, store.WithClock(e.Now))
	}
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	r.inbox = inbox.NewService(store.NewInbox(r.store), pol, inbox.WithClock(e.Now), inbox.WithSnoozes(store.NewInbox(r.store)))
	runs := agent.NewRuns(store.NewRuns(r.store), e.Broker, agents, agent.WithRunsClock(e.Now))
	r.dispatcher = delivery.New(store.NewQueue(r.store), runs, e.Broker, delivery.StreamRoutes(agents, e.Stream),
		service.Base{Logger: storetest.Logger(t), Now: e.Now}, delivery.WithSnoozes(r.inbox))
	return r
}

// Three replicas on one database: records created on one, snoozed on a second, are held
// by every replica's passes; a replica started after the snooze (a restart) sees it; at
// its time all three release at once and each record is released exactly once and
// delivered exactly once.
func TestSnoozeAcrossReplicas(t *testing.T) {
	const threads = 12
	agents := []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}},
		{ID: "support", Token: deliverytest.SupportToken, Target: agent.TargetConfig{Kind: agent.TargetStream}}}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			c := deliverytest.Config{Backend: &b, Agents: agents}
			e := deliverytest.New(t, c)
			second := newReplica(t, e, b, agents)
			ids := make([]string, threads)
			for i := range threads {
				ids[i] = e.Ingest(inbox.Notification{Thread: key(fmt.Sprintf("r%02d", i)), Source: "github", Kind: "comment",
					Summary: fmt.Sprintf("n%d", i)})
			}
			at := e.Clock.Now().Add(time.Hour)
			for i, id := range ids {
				_, err := store.NewRecords(second.store).SnoozeRecord(context.Background(), key(fmt.Sprintf("r%02d", i)), id, at, e.Clock.Now())
				require.NoError(t, err)
			}
			third := newReplica(t, e, b, agents) // started after the snooze
			all := []*replica{{store: e.Store, inbox: e.Inbox, dispatcher: e.Dispatcher}, second, third}
			passAll := func() {
				var wg sync.WaitGroup
				for _, r := range all {
					wg.Go(func() {
						_, err := r.dispatcher.RunOnce(context.Background())
						require.NoError(t, err)
					})
				}
				wg.Wait()
			}
			passAll()
			e.Clock.Advance(time.Hour - time.Second)
			passAll()
			for i := range threads {
				require.Empty(t, e.Log(key(fmt.Sprintf("r%02d", i))), "held on every replica")
			}

			e.Clock.Advance(time.Second)
			var released atomic.Int64
			var wg sync.WaitGroup
			for _, r := range all {
				wg.Go(func() {
					n, err := r.inbox.ReleaseSnoozed(context.Background())
					require.NoError(t, err)
					released.Add(int64(n))
				})
			}
			wg.Wait()
			require.EqualValues(t, threads, released.Load(), "each record released exactly once")
			for range 5 {
				passAll()
			}
			for i, id := range ids {
				k := key(fmt.Sprintf("r%02d", i))
				require.Equal(t, inbox.StatusDelivered, e.Record(id).Status, "record %d", i)
				sigs := signalsOf(e, k, 0)
				require.Len(t, sigs, 1, "delivered once: %d", i)
				require.True(t, slices.Contains(sigs[0].RecordIDs, id))
			}
		})
	}
}
