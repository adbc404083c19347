package inboxmcp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

type inboxPage struct {
	Notifications []map[string]any `json:"notifications"`
	HasMore       bool             `json:"hasMore"`
	MarkedSeen    int              `json:"markedSeen"`
}

type readReport struct {
	Message     string `json:"message"`
	Delivered   int    `json:"delivered"`
	MarkedSeen  int    `json:"markedSeen"`
	Unavailable int    `json:"unavailable"`
	AlreadyRead int    `json:"alreadyRead"`
}

func pageIDs(p inboxPage) []string {
	out := make([]string, len(p.Notifications))
	for i, n := range p.Notifications {
		out[i] = n["id"].(string)
	}
	return out
}

func lowNote(e *env, k inbox.ThreadKey, summary, as string) string {
	id := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityLow, Summary: summary,
		Payload: []byte(`{"big":"payload"}`), DeliverAs: as})
	e.Clock.Advance(1e9)
	return id
}

// list and search mark what they return seen and answer Mastra's {notifications, hasMore,
// markedSeen} without payload or metadata; messages are listed but never marked.
func TestInboxToolListMarksSeen(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnvWith(t, deliverytest.Config{Backend: &b})
			cs := session(t, e, deliverytest.CoderToken)
			k := coderThread
			a, bb, c := lowNote(e, k, "CI failed on main", ""), lowNote(e, k, "CI failed on dev", ""), lowNote(e, k, "Jane: ping", "")
			e.OpenRun(k) // the queued message waits for the run to end
			q := lowNote(e, k, "queued for next turn", inbox.DeliverAsQueued)

			var p inboxPage
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "list", "limit": 2}), &p)
			require.Equal(t, []string{q, c}, pageIDs(p), "newest first")
			require.True(t, p.HasMore)
			require.Equal(t, 1, p.MarkedSeen, "the message is listed, not marked")
			require.Equal(t, "seen", p.Notifications[1]["status"])
			require.NotContains(t, p.Notifications[1], "payload")
			require.NotContains(t, p.Notifications[1], "metadata")
			require.Equal(t, inbox.StatusSeen, e.Record(c).Status)
			require.Equal(t, inbox.StatusPending, e.Record(q).Status)

			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "list"}), &p)
			require.Equal(t, []string{q, bb, a}, pageIDs(p), "seen ones leave the default listing")
			require.False(t, p.HasMore)
			require.Equal(t, 2, p.MarkedSeen)

			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "search", "query": "ci FAILED"}), &p)
			require.Equal(t, []string{bb, a}, pageIDs(p), "search looks in every status")
			require.Zero(t, p.MarkedSeen)
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "list", "status": "seen", "source": "github", "priority": "low"}), &p)
			require.Len(t, p.Notifications, 3)
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "list", "status": "seen", "priority": "high"}), &p)
			require.Empty(t, p.Notifications)

			var moved struct {
				Notification inbox.Record `json:"notification"`
			}
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "archive", "id": a}), &moved)
			require.Equal(t, inbox.StatusArchived, moved.Notification.Status)
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "dismiss", "id": bb}), &moved)
			require.Equal(t, inbox.StatusDismissed, e.Record(bb).Status)
		})
	}
}

// read hands each pending notification to the thread as its full <notification> signal
// and marks it seen; one delivered before is only marked seen; a waiting message is
// unavailable and stays pending.
func TestInboxToolRead(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnvWith(t, deliverytest.Config{Backend: &b})
			cs := session(t, e, deliverytest.CoderToken)
			k := coderThread
			old := e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "deploy", Priority: inbox.PriorityUrgent, Summary: "deployed"})
			e.Pass() // delivered in full (an urgent one wakes the thread)
			require.Equal(t, inbox.StatusDelivered, e.Record(old).Status)
			e.Clock.Advance(1e9)
			run := e.OpenRun(k)
			a, bb := lowNote(e, k, "first", ""), lowNote(e, k, "second", "")
			q := lowNote(e, k, "queued", inbox.DeliverAsQueued)
			frames := len(e.Log(k))
			want := []string{agent.RecordSignalID(e.Record(a)), agent.RecordSignalID(e.Record(bb))}

			var r readReport
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "read"}), &r)
			require.Equal(t, readReport{Message: "2 notifications will now be delivered.", Delivered: 2, MarkedSeen: 1, Unavailable: 1}, r)
			var sent []agent.Frame
			for _, f := range e.Log(k)[frames:] {
				if f.Event == agent.EventSignal {
					sent = append(sent, f)
				}
			}
			require.Len(t, sent, 2)
			for i, id := range []string{a, bb} {
				require.Equal(t, agent.TypeNotification, sent[i].Signal.Type, "oldest first")
				require.Equal(t, agent.BehaviorDeliver, sent[i].Behavior, "into the active run")
				require.Equal(t, run.ID, sent[i].RunID)
				require.Equal(t, want[i], sent[i].Signal.ID, "the id a delivery pass would use")
				require.Contains(t, sent[i].XML, `id="`+id+`"`)
				require.Equal(t, inbox.StatusSeen, e.Record(id).Status)
			}
			require.Equal(t, inbox.StatusSeen, e.Record(old).Status)
			require.Equal(t, inbox.StatusPending, e.Record(q).Status)

			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "read", "id": a}), &r)
			require.Equal(t, readReport{Message: "No unread notifications needed delivery.", AlreadyRead: 1}, r)
			e.Pass()
			require.Len(t, e.Log(k), frames+2, "the dispatcher does not send them again")
		})
	}
}

// read on an idle thread wakes it, as Mastra's sendSignal does by default.
func TestInboxToolReadWakes(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread
	a := lowNote(e, k, "first", "")
	var r readReport
	call(t, cs, "notification-inbox", args(k, map[string]any{"action": "read", "id": a}), &r)
	require.Equal(t, 1, r.Delivered)
	log := e.Log(k)
	require.Equal(t, agent.BehaviorWake, log[len(log)-1].Behavior)
}

// read's wake of an idle thread is the agent's own wake: it counts against
// max_concurrent_wakes, and with the agent's slots full the notification is not sent
// (unavailable, left pending for the dispatcher's turn) and no run is opened.
func TestInboxToolReadWithinMaxConcurrentWakes(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			agents := []agent.Config{{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream},
				MaxConcurrentWakes: 1}}
			e := newEnvWith(t, deliverytest.Config{Backend: &b, Agents: agents})
			cs := session(t, e, deliverytest.CoderToken)
			busy, k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "busy"}, coderThread
			var r readReport
			call(t, cs, "notification-inbox", args(busy, map[string]any{"action": "read", "id": lowNote(e, busy, "first", "")}), &r)
			require.Equal(t, 1, r.Delivered, "the one slot: a wake run opens")

			a := lowNote(e, k, "second", "")
			call(t, cs, "notification-inbox", args(k, map[string]any{"action": "read", "id": a}), &r)
			require.Equal(t, readReport{Message: "No unread notifications needed delivery.", Unavailable: 1}, r)
			require.Equal(t, inbox.StatusPending, e.Record(a).Status)
			require.Empty(t, e.Log(k), "no run opened, nothing sent")
		})
	}
}

// The tool reaches only the token's agent's threads, exactly as inbox_* do: another
// agent's thread is forbidden, and a record id of another thread names nothing here —
// it is neither read, nor marked, nor moved.
func TestInboxToolScope(t *testing.T) {
	e := newEnv(t)
	victim := supportThread
	secret := lowNote(e, victim, "support's secret", "")
	cs := session(t, e, deliverytest.CoderToken)
	for _, action := range []string{"list", "read", "markSeen", "dismiss", "archive", "search"} {
		in := args(victim, map[string]any{"action": action, "agentId": "support", "id": secret, "query": "secret"})
		require.Contains(t, toolError(t, cs, "notification-inbox", in), "forbidden", action)
		own := args(inbox.ThreadKey{Resource: victim.Resource, Thread: victim.Thread}, map[string]any{"action": action, "id": secret, "query": "secret"})
		if action == "list" || action == "search" {
			var p inboxPage
			call(t, cs, "notification-inbox", own, &p)
			require.Empty(t, p.Notifications, action)
			continue
		}
		require.Contains(t, toolError(t, cs, "notification-inbox", own), "not_found", action)
	}
	require.Equal(t, inbox.StatusPending, e.Record(secret).Status)
	require.Empty(t, e.Log(victim), "nothing was sent to the other agent's thread")
}

// Mastra's refinements: search needs a query, markSeen, dismiss and archive an id.
func TestInboxToolInput(t *testing.T) {
	e := newEnv(t)
	cs := session(t, e, deliverytest.CoderToken)
	k := coderThread
	require.Equal(t, "bad_request: notification-inbox search requires query",
		toolError(t, cs, "notification-inbox", args(k, map[string]any{"action": "search", "query": "  "})))
	for _, action := range []string{"markSeen", "dismiss", "archive"} {
		require.Equal(t, "bad_request: notification-inbox "+action+" requires id",
			toolError(t, cs, "notification-inbox", args(k, map[string]any{"action": action})))
	}
	for name, in := range map[string]map[string]any{
		"unknown action":   {"action": "delete"},
		"no action":        {},
		"unknown status":   {"action": "list", "status": "gone"},
		"unknown priority": {"action": "list", "priority": "asap"},
		"limit zero":       {"action": "list", "limit": 0.5},
		"limit too large":  {"action": "list", "limit": 201},
	} {
		require.Contains(t, toolError(t, cs, "notification-inbox", args(k, in)), "validating", name)
	}
	require.Contains(t, toolError(t, cs, "notification-inbox", args(k, map[string]any{"action": "read", "id": "nope"})), "not_found")
}
