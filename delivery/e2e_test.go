package delivery_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

const wait = 10 * time.Second

func key(thread string) inbox.ThreadKey {
	return inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: thread}
}

// forBackends runs fn with an Env on every configured database.
func forBackends(t *testing.T, cfg deliverytest.Config, fn func(t *testing.T, e *deliverytest.Env)) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			c := cfg
			c.Backend = &b
			fn(t, deliverytest.New(t, c))
		})
	}
}

type created struct {
	RecordID string         `json:"recordId"`
	Merged   bool           `json:"merged"`
	Decision inbox.Decision `json:"decision"`
}

// create posts a notification through the agent API, the connectors' path.
func create(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body map[string]any) created {
	t.Helper()
	var out created
	status := e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k), body, &out)
	require.Contains(t, []int{http.StatusCreated, http.StatusOK}, status)
	return out
}

func comment(summary string, pr inbox.Priority) map[string]any {
	return map[string]any{"source": "github", "kind": "comment", "summary": summary, "priority": string(pr)}
}

func fullXML(id string, pr inbox.Priority, summary string) string {
	return fmt.Sprintf(`<notification id="%s" source="github" type="comment" kind="comment" priority="%s" status="delivered" verified_by="agent-token">%s</notification>`,
		id, pr, summary)
}

// TestDefaultTableThroughStream checks the design's priority × presence table end to
// end: notification created through the agent API, dispatched, received by a subscriber.
func TestDefaultTableThroughStream(t *testing.T) {
	cases := []struct {
		pr      inbox.Priority
		active  bool
		tag     string
		action  agent.Behavior
		wakes   bool
		status  inbox.Status
		summary bool
	}{
		{inbox.PriorityUrgent, true, agent.TagNotification, agent.BehaviorDeliver, false, inbox.StatusDelivered, false},
		{inbox.PriorityUrgent, false, agent.TagNotification, agent.BehaviorWake, true, inbox.StatusDelivered, false},
		{inbox.PriorityHigh, true, agent.TagNotificationSummary, agent.BehaviorDeliver, false, inbox.StatusPending, true},
		{inbox.PriorityHigh, false, agent.TagNotification, agent.BehaviorWake, true, inbox.StatusDelivered, false},
		{inbox.PriorityMedium, true, agent.TagNotificationSummary, agent.BehaviorDeliver, false, inbox.StatusPending, true},
		{inbox.PriorityMedium, false, agent.TagNotification, agent.BehaviorWake, true, inbox.StatusDelivered, false},
		{inbox.PriorityLow, true, agent.TagNotificationSummary, agent.BehaviorDeliver, false, inbox.StatusPending, true},
		{inbox.PriorityLow, false, agent.TagNotificationSummary, agent.BehaviorPersist, false, inbox.StatusPending, true},
	}
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		for _, c := range cases {
			presence := "idle"
			if c.active {
				presence = "active"
			}
			t.Run(string(c.pr)+"/"+presence, func(t *testing.T) {
				k := key(string(c.pr) + "-" + presence)
				sub := e.Subscribe(k, "", "")
				runID := ""
				if c.active {
					runID = e.OpenRun(k).ID
					ev := sub.Next(wait)
					require.Equal(t, "run", ev.Event)
					require.Equal(t, "open", ev.Str("status"))
					require.Equal(t, "agent", ev.Str("origin"))
				}
				rec := create(t, e, k, comment("Jane commented on #7", c.pr))
				e.Pass()
				if c.pr == inbox.PriorityLow {
					// Batched: a low-only summary waits one summary interval for company.
					require.Empty(t, e.Record(rec.RecordID).SummarySignal)
					e.Clock.Advance(inbox.DefaultSummaryInterval)
					e.Pass()
				}
				if c.wakes {
					ev := sub.Next(wait)
					require.Equal(t, "run", ev.Event)
					require.Equal(t, "open", ev.Str("status"))
					require.Equal(t, "wake", ev.Str("origin"), "a wake opens a run on the agent's behalf")
					runID = ev.Str("runId")
					require.NotEmpty(t, runID)
				}
				ev := sub.Next(wait)
				require.Equal(t, "signal", ev.Event)
				require.Equal(t, string(c.action), ev.Str("action"))
				require.Equal(t, c.tag, ev.Str("tagName"))
				require.Equal(t, "notification", ev.Str("type"))
				require.NotEmpty(t, ev.Str("id"))
				require.NotEmpty(t, ev.Str("createdAt"))
				require.Contains(t, ev.Data, "attributes")
				require.Contains(t, ev.Data, "metadata")
				if runID == "" {
					require.Nil(t, ev.Data["runId"], "persisted to an idle thread: no run")
				} else {
					require.Equal(t, runID, ev.Str("runId"))
				}
				if c.summary {
					require.Equal(t, fmt.Sprintf(`<notification-summary pending="1" priority="%s">github: 1</notification-summary>`, c.pr), ev.Str("xml"))
					require.Equal(t, "github: 1", ev.Str("contents"))
				} else {
					require.Equal(t, fullXML(rec.RecordID, c.pr, "Jane commented on #7"), ev.Str("xml"))
					require.Equal(t, "Jane commented on #7", ev.Str("contents"))
				}
				r := e.Record(rec.RecordID)
				require.Equal(t, c.status, r.Status)
				if c.summary {
					require.Equal(t, ev.Str("id"), r.SummarySignal)
				} else {
					require.Equal(t, ev.Str("id"), r.SignalID)
				}
				want := 1
				if c.active || c.wakes {
					want = 2 // plus the run frame
				}
				require.Len(t, e.Log(k), want, "nothing else logged")
				live, err := e.Runs.Live(t.Context(), k)
				require.NoError(t, err)
				require.Equal(t, c.active || c.wakes, live != nil, "low never wakes")
			})
		}
	})
}

// TestSummaryPacingWhileActive: five comments on one PR within a second while the agent
// works make one record (coalescedCount 5) and at most two model-visible frames.
func TestSummaryPacingWhileActive(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("pr-7")
		run := e.OpenRun(k)
		var id string
		for i := range 5 {
			body := comment(fmt.Sprintf("comment %d on PR #7", i+1), inbox.PriorityMedium)
			body["coalesceKey"] = "acme/api#7"
			id = create(t, e, k, body).RecordID
			e.Pass() // the worst case: a pass after every comment
			e.Clock.Advance(200 * time.Millisecond)
		}
		r := e.Record(id)
		require.Equal(t, 5, r.CoalescedCount)
		require.Equal(t, "comment 5 on PR #7", r.Summary)

		e.Clock.Advance(10 * time.Second) // the pacing interval
		e.Pass()
		e.Clock.Advance(time.Minute)
		e.Pass()

		var visible []agent.Frame
		for _, f := range e.Log(k) {
			if f.Event == agent.EventSignal && f.Behavior != agent.BehaviorPersist {
				visible = append(visible, f)
			}
		}
		require.Len(t, visible, 2)
		for _, f := range visible {
			require.Equal(t, agent.TagNotificationSummary, f.Signal.TagName)
			require.Equal(t, run.ID, f.RunID)
			require.Equal(t, `<notification-summary pending="1" priority="medium">github: 1</notification-summary>`, f.XML)
		}
		require.NotEqual(t, visible[0].ID, visible[1].ID)
		require.Equal(t, inbox.StatusPending, e.Record(id).Status, "details stay in the inbox")
	})
}

// TestSummaryThenFullOnFinish: a high record summarised while active is delivered in full
// on the run's finish itself — at the same instant, with no tick in between.
func TestSummaryThenFullOnFinish(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("review")
		sub := e.Subscribe(k, "", "after=latest")
		run := e.OpenRun(k)
		require.Equal(t, "run", sub.Next(wait).Event)
		rec := create(t, e, k, comment("Review requested", inbox.PriorityHigh))
		e.Pass()
		ev := sub.Next(wait)
		require.Equal(t, agent.TagNotificationSummary, ev.Str("tagName"))
		require.Equal(t, "deliver", ev.Str("action"))
		require.True(t, e.Record(rec.RecordID).FullWhenIdle)

		e.FinishRun(k, run.ID)
		ev = sub.Next(wait)
		require.Equal(t, "run", ev.Event)
		require.Equal(t, "finished", ev.Str("status"))
		e.Pass() // same clock reading as the finish: due on the transition itself
		ev = sub.Next(wait)
		require.Equal(t, "run", ev.Event)
		require.Equal(t, "wake", ev.Str("origin"))
		wakeRun := ev.Str("runId")
		ev = sub.Next(wait)
		require.Equal(t, "signal", ev.Event)
		require.Equal(t, "wake", ev.Str("action"))
		require.Equal(t, wakeRun, ev.Str("runId"))
		require.Equal(t, fullXML(rec.RecordID, inbox.PriorityHigh, "Review requested"), ev.Str("xml"))
		r := e.Record(rec.RecordID)
		require.Equal(t, inbox.StatusDelivered, r.Status)
		require.Equal(t, ev.Str("id"), r.SignalID)
	})
}

// TestSummaryOrdering: one summary lists a thread's summary-due records by priority, then
// age; a pass sends an urgent full notification before the summary.
func TestSummaryOrdering(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("busy")
		e.OpenRun(k)
		var ids []string
		for _, pr := range []inbox.Priority{inbox.PriorityLow, inbox.PriorityMedium, inbox.PriorityHigh, inbox.PriorityLow, inbox.PriorityMedium} {
			ids = append(ids, create(t, e, k, comment("c-"+string(pr), pr)).RecordID)
			e.Clock.Advance(time.Second)
		}
		slack := comment("DM from Jane", inbox.PriorityUrgent)
		slack["source"] = "slack"
		urgent := create(t, e, k, slack).RecordID
		e.Pass()
		var signals []agent.Frame
		for _, f := range e.Log(k) {
			if f.Event == agent.EventSignal {
				signals = append(signals, f)
			}
		}
		require.Len(t, signals, 2)
		require.Equal(t, agent.TagNotification, signals[0].Signal.TagName, "urgent first")
		require.Equal(t, []string{urgent}, signals[0].RecordIDs)
		sum := signals[1]
		require.Equal(t, agent.TagNotificationSummary, sum.Signal.TagName)
		require.Equal(t, []string{ids[2], ids[1], ids[4], ids[0], ids[3]}, sum.RecordIDs)
		require.Equal(t, `<notification-summary pending="5" priority="high">github: 5</notification-summary>`, sum.XML)
		require.Equal(t, agent.BehaviorDeliver, sum.Behavior)
		require.Equal(t, []any{ids[2], ids[1], ids[4], ids[0], ids[3]}, toAny(sum.Signal.Metadata["notificationIds"]))
	})
}

func toAny(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return nil
}

// TestIdleOrdering: full deliveries to an idle thread go most urgent first, then oldest;
// the first wakes, the rest go into that run.
func TestIdleOrdering(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := key("idle")
	var ids []string
	for _, pr := range []inbox.Priority{inbox.PriorityMedium, inbox.PriorityUrgent, inbox.PriorityHigh, inbox.PriorityUrgent} {
		ids = append(ids, create(t, e, k, comment("c", pr)).RecordID)
		e.Clock.Advance(time.Second)
	}
	e.Pass()
	log := e.Log(k)
	require.Len(t, log, 5)
	require.Equal(t, agent.EventRun, log[0].Event)
	var got []string
	for i, f := range log[1:] {
		got = append(got, f.RecordIDs[0])
		require.Equal(t, log[0].RunID, f.RunID)
		if i == 0 {
			require.Equal(t, agent.BehaviorWake, f.Behavior)
		} else {
			require.Equal(t, agent.BehaviorDeliver, f.Behavior)
		}
	}
	require.Equal(t, []string{ids[1], ids[3], ids[2], ids[0]}, got)
}

// TestLeaseExpiryTurnsIdle: a run whose agent stops heartbeating expires at its lease; the
// thread turns idle and what waited for idle goes out.
func TestLeaseExpiryTurnsIdle(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("crashy")
		run := e.OpenRun(k)
		require.Equal(t, e.Clock.Now().Add(agent.DefaultRunLease), run.LeaseUntil)
		rec := create(t, e, k, comment("CI failed", inbox.PriorityHigh))
		e.Pass()
		require.Equal(t, inbox.StatusPending, e.Record(rec.RecordID).Status)

		e.Clock.Advance(agent.DefaultRunLease - time.Second)
		e.Pass()
		live, err := e.Runs.Live(t.Context(), k)
		require.NoError(t, err)
		require.NotNil(t, live, "still active just before the lease lapses")

		e.Clock.Advance(time.Second)
		live, err = e.Runs.Live(t.Context(), k)
		require.NoError(t, err)
		require.Nil(t, live, "idle once the lease lapsed")
		e.Pass()
		log := e.Log(k)
		require.Len(t, log, 6)
		require.Equal(t, []string{"open", ""}, []string{log[0].RunStatus, log[1].RunStatus})
		require.Equal(t, agent.RunExpired, log[2].RunStatus)
		require.Equal(t, run.ID, log[2].RunID)
		require.Equal(t, agent.OriginWake, log[3].Origin)
		// The summary was in flight in the expired run: recovered at the new run's start.
		require.Equal(t, agent.TagNotificationSummary, log[4].Signal.TagName)
		require.Contains(t, log[4].XML, `recovered="true"`)
		require.Equal(t, agent.BehaviorWake, log[5].Behavior)
		require.Equal(t, []string{rec.RecordID}, log[5].RecordIDs)
		require.Equal(t, inbox.StatusDelivered, e.Record(rec.RecordID).Status)
		var heartbeat map[string]any
		require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/runs/"+run.ID+"/heartbeat"), e.Token(k), nil, &heartbeat))
	})
}

// TestPolicyLogAndDiscard: a policy's log writes the full notification to the thread
// without a wake (what persist did before it followed Mastra); discard stores the record
// as discarded and sends nothing.
func TestPolicyLogAndDiscard(t *testing.T) {
	cfg := deliverytest.Config{Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
		{Match: inbox.RuleMatch{Kind: inbox.StringList{"push"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionLog}},
		{Match: inbox.RuleMatch{Kind: inbox.StringList{"star"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDiscard}},
	}}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		k := key("policy")
		push := create(t, e, k, map[string]any{"source": "github", "kind": "push", "summary": "3 commits", "priority": "urgent"})
		star := create(t, e, k, map[string]any{"source": "github", "kind": "star", "summary": "starred"})
		require.Equal(t, inbox.ActionDiscard, star.Decision.Action)
		e.Pass()
		log := e.Log(k)
		require.Len(t, log, 1, "no run: log never wakes")
		require.Equal(t, agent.BehaviorPersist, log[0].Behavior)
		require.Equal(t, []string{push.RecordID}, log[0].RecordIDs)
		require.Empty(t, log[0].RunID)
		require.Equal(t, inbox.StatusDelivered, e.Record(push.RecordID).Status)
		require.Equal(t, inbox.StatusDiscarded, e.Record(star.RecordID).Status)
	})
}

// TestPolicyPersistKeepsInInbox: persist is Mastra's: the record stays pending in the
// thread's inbox, untold: no frame, no wake, however long the dispatcher runs and
// whatever the thread does; the agent finds it by listing its inbox.
func TestPolicyPersistKeepsInInbox(t *testing.T) {
	cfg := deliverytest.Config{Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
		{Match: inbox.RuleMatch{Kind: inbox.StringList{"push"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionPersist}},
	}}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		k := key("persist")
		push := create(t, e, k, map[string]any{"source": "github", "kind": "push", "summary": "3 commits", "priority": "urgent"})
		require.Equal(t, inbox.ActionPersist, push.Decision.Action)
		e.Pass()
		run := e.OpenRun(k)
		e.Pass()
		e.FinishRun(k, run.ID)
		e.Clock.Advance(time.Hour)
		e.Pass()
		for _, f := range e.Log(k) {
			require.Equal(t, agent.EventRun, f.Event, "only the run's own frames: the record was never sent")
		}
		r := e.Record(push.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status)
		require.Nil(t, r.DueAt())
		var page struct {
			Notifications []inbox.Record `json:"notifications"`
		}
		require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications"), e.Token(k), nil, &page))
		require.Len(t, page.Notifications, 1, "in the inbox")
		require.Equal(t, push.RecordID, page.Notifications[0].ID)
	})
}

// TestPolicyQueueAfterTheRun: queue hands the full notification over as next-turn input:
// nothing goes into the active run; when it ends the notification wakes the thread; on
// an idle thread it wakes at once.
func TestPolicyQueueAfterTheRun(t *testing.T) {
	cfg := deliverytest.Config{Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
		{Match: inbox.RuleMatch{Kind: inbox.StringList{"check"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionQueue}},
	}}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		k := key("queue")
		run := e.OpenRun(k)
		q := create(t, e, k, map[string]any{"source": "ci", "kind": "check", "summary": "build red", "priority": "urgent"})
		require.Equal(t, inbox.ActionQueue, q.Decision.Action)
		e.Pass()
		for _, f := range e.Log(k) {
			require.Equal(t, agent.EventRun, f.Event, "nothing goes into the active run")
		}
		require.Equal(t, inbox.StatusPending, e.Record(q.RecordID).Status)

		e.FinishRun(k, run.ID)
		e.Pass()
		log := e.Log(k)
		last := log[len(log)-1]
		require.Equal(t, agent.EventSignal, last.Event)
		require.Equal(t, agent.BehaviorWake, last.Behavior, "the run's end hands it over, waking the thread")
		require.Equal(t, []string{q.RecordID}, last.RecordIDs)
		require.NotEqual(t, run.ID, last.RunID)
		require.Equal(t, agent.TagNotification, last.Signal.TagName)
		require.Equal(t, inbox.StatusDelivered, e.Record(q.RecordID).Status)

		idle := key("queue-idle")
		q = create(t, e, idle, map[string]any{"source": "ci", "kind": "check", "summary": "build green"})
		e.Pass()
		log = e.Log(idle)
		require.NotEmpty(t, log)
		last = log[len(log)-1]
		require.Equal(t, agent.BehaviorWake, last.Behavior, "an idle thread is woken at once")
		require.Equal(t, []string{q.RecordID}, last.RecordIDs)
	})
}
