package delivery_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// ciBody is a CI result of one check in a net-state lane, as a connector or the agent
// API hands it in.
func ciBody(state string) map[string]any {
	kind, pr := "ci-failure", "high"
	if state == "success" {
		kind, pr = "ci-recovered", "medium"
	}
	return map[string]any{"source": "github", "kind": kind, "summary": "lint " + state, "priority": pr,
		"netKey": "github:acme/api#7:ci:check_run:lint", "state": state, "restState": "success"}
}

// visible lists the signals that reached the model (wake or deliver) in k's log.
func visible(e *deliverytest.Env, k inbox.ThreadKey) []agent.Frame {
	var out []agent.Frame
	for _, f := range e.Log(k) {
		if f.Event == agent.EventSignal && f.Behavior != agent.BehaviorPersist {
			out = append(out, f)
		}
	}
	return out
}

// settle runs passes now and after every pacing window a record could wait for.
func settle(e *deliverytest.Env) {
	e.Pass()
	e.Clock.Advance(time.Minute)
	e.Pass()
}

// TestNetStateThroughStream runs the three net-state sequences end to end: created through
// the agent API (the connectors' path), dispatched, read from the thread's stream.
func TestNetStateThroughStream(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		t.Run("failure pending, then success: nothing", func(t *testing.T) {
			k := key("pending-then-success")
			fail := create(t, e, k, ciBody("failure"))
			ok := create(t, e, k, ciBody("success"))
			settle(e)
			require.Empty(t, visible(e, k))
			require.Empty(t, e.Log(k), "not even a wake")
			require.Equal(t, inbox.StatusSuperseded, e.Record(fail.RecordID).Status)
			r := e.Record(ok.RecordID)
			require.Equal(t, inbox.StatusSuperseded, r.Status)
			require.Equal(t, "net state unchanged: success", r.Reason)
			require.Equal(t, 2, r.CoalescedCount)

			// Kept and visible in the agent's inbox.
			var list struct{ Notifications []inbox.Record }
			require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications?status=superseded"), e.Token(k), nil, &list))
			require.Len(t, list.Notifications, 2)

			// The agent may archive a superseded record, as any other but a discarded one.
			var rec inbox.Record
			require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+fail.RecordID+"/archive"), e.Token(k), nil, &rec))
			require.Equal(t, inbox.StatusArchived, rec.Status)
			require.Equal(t, http.StatusConflict, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+ok.RecordID+"/seen"), e.Token(k), nil, nil),
				"a superseded record is not pending: it cannot be read into the model's knowledge")
		})

		t.Run("failure delivered, then success: the recovery", func(t *testing.T) {
			k := key("delivered-then-success")
			sub := e.Subscribe(k, "", "")
			create(t, e, k, ciBody("failure"))
			e.Pass()
			require.Equal(t, "run", sub.Next(wait).Event)
			ev := sub.Next(wait)
			require.Equal(t, string(agent.BehaviorWake), ev.Str("action"))
			require.Equal(t, "lint failure", ev.Str("contents"))
			e.FinishRun(k, ev.Str("runId"))
			require.Equal(t, "run", sub.Next(wait).Event)

			ok := create(t, e, k, ciBody("success"))
			settle(e)
			require.Equal(t, "run", sub.Next(wait).Event)
			ev = sub.Next(wait)
			require.Equal(t, "signal", ev.Event)
			require.Equal(t, "lint success", ev.Str("contents"))
			require.Len(t, visible(e, k), 2)
			require.Equal(t, inbox.StatusDelivered, e.Record(ok.RecordID).Status)
		})

		t.Run("failure, success, failure, all pending: one failure", func(t *testing.T) {
			k := key("flap")
			create(t, e, k, ciBody("failure"))
			create(t, e, k, ciBody("success"))
			last := create(t, e, k, ciBody("failure"))
			settle(e)
			v := visible(e, k)
			require.Len(t, v, 1)
			require.Equal(t, "lint failure", v[0].Signal.Contents)
			require.Equal(t, []string{last.RecordID}, v[0].RecordIDs)
		})
	})
}
