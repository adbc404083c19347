package a2a_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/a2a"
)

// protocols are the agent paths of the harness by the protocol version their cards
// declare: v1.0 (SendMessage) and v0.3 only (message/send).
var protocols = []struct{ name, prefix string }{{"v1.0", ""}, {"v0.3", "v03/"}}

// A wake of an idle thread opens one task in the thread's context: the message's id is
// the signal's, its text the signal's XML, its data part the signal; the task's end
// (completed) closes the gateway run as finished. With push notifications and without
// (polling alone), in both protocol versions.
func TestWakeOpensATaskWhoseEndClosesTheRun(t *testing.T) {
	for _, p := range protocols {
		for _, push := range []bool{true, false} {
			name := p.name + "/push"
			if !push {
				name = p.name + "/polled"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, envOpts{path: p.prefix + "echo", noPush: !push})
				k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "wake-" + strings.ReplaceAll(name, "/", "-")}
				e.note(k, inbox.PriorityUrgent, "CI failed on main")
				woke := e.waitSignals(k, 1)[0]
				require.Equal(t, agent.BehaviorWake, woke.Behavior)
				from := "push"
				if !push {
					from = "poll"
				}
				var done a2a.TaskState
				for done.State != a2a.StateCompleted || done.From == "answer" {
					done = e.state(k, a2a.StateCompleted)
				}
				require.Equal(t, from, done.From, "the end was learned from the %s", from)
				require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))

				got := e.received(k)
				require.Len(t, got, 1, "one message, one task")
				m := got[0]
				require.Equal(t, woke.Signal.ID, m.MessageID, "messageId is the signal id")
				require.Equal(t, a2a.ContextID(k), m.ContextID, "the thread's context")
				require.Equal(t, woke.XML, m.Text(), "the text part is the signal's XML")
				require.Equal(t, done.TaskID, m.TaskID)
				data := m.Data()
				require.NotNil(t, data, "a data part")
				require.Equal(t, "signal", data["type"])
				sig, _ := data["signal"].(map[string]any)
				require.Equal(t, woke.Signal.ID, sig["id"])
				require.Equal(t, "CI failed on main", sig["contents"])
				require.Equal(t, []any{woke.RecordIDs[0]}, data["recordIds"])
				require.Equal(t, inbox.StatusDelivered, e.Record(woke.RecordIDs[0]).Status)
			})
		}
	}
}

// busy: wait: a second event while the task works is not sent into it (nor as a second
// task in the context); once the task ends the thread is idle and it goes as the next
// task's wake.
func TestBusyWaitHoldsUntilTheTaskEnds(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, envOpts{path: p.prefix + "hold"})
			k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "wait-" + p.name}
			e.note(k, inbox.PriorityUrgent, "CI failed on main")
			woke := e.waitSignals(k, 1)[0]
			working := e.state(k, a2a.StateWorking)
			// What the console's thread page shows: the context, its task, working.
			rr, ok, err := e.tasks.RuntimeRun(context.Background(), k)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, a2a.Kind, rr.Kind)
			require.Equal(t, a2a.ContextID(k), rr.Thread)
			require.Equal(t, "busy", rr.Status)
			require.Equal(t, "task", rr.Term)
			require.Equal(t, working.TaskID, rr.Run)
			require.Equal(t, a2a.StateWorking, rr.RunStatus)

			second := e.note(k, inbox.PriorityUrgent, "deploy blocked")
			// The dispatcher looks at it, the target holds it: a pass that found it waiting.
			e.waitRecordWaits(second)
			require.Len(t, e.received(k), 1, "nothing more reached the agent while its task works")
			require.Len(t, e.signals(k), 1)

			require.NoError(t, e.h.Release(a2a.ContextID(k)))
			require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))
			_, ok, err = e.tasks.RuntimeRun(context.Background(), inbox.ThreadKey{Agent: "other", Resource: k.Resource, Thread: k.Thread})
			require.NoError(t, err)
			require.False(t, ok, "another agent's thread is not this runtime's to say")
			next := e.waitSignals(k, 2)[1]
			require.Equal(t, agent.BehaviorWake, next.Behavior, "the held notification wakes the idle thread")
			require.NotEqual(t, woke.RunID, next.RunID)
			require.Equal(t, "deploy blocked", next.Signal.Contents)
			e.state(k, a2a.StateWorking)
			got := e.received(k)
			require.Len(t, got, 2)
			require.NotEqual(t, got[0].TaskID, got[1].TaskID, "its own task")
			require.NoError(t, e.h.Release(a2a.ContextID(k)))
			e.waitRunClosed(k, next.RunID)
		})
	}
}

// waitRecordWaits waits until the dispatcher tried the record and the target held it:
// pending, to go in full once the thread turns idle.
func (e *env) waitRecordWaits(id string) {
	e.t.Helper()
	timeout := time.After(waitLong)
	for {
		r := e.Record(id)
		if r.FullWhenIdle {
			require.Equal(e.t, inbox.StatusPending, r.Status)
			require.Zero(e.t, r.Attempts, "no attempt counted: holding is not failing")
			return
		}
		select {
		case <-e.Dispatcher.TestSignals.Pass.C():
		case <-timeout:
			e.t.Fatalf("record %s never waited for idle: %+v", id, r)
		}
	}
}

// busy: send: a second event while the task works goes into it, carrying its id.
func TestBusySendGoesIntoTheWorkingTask(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, envOpts{path: p.prefix + "hold", busy: a2a.BusySend})
			k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "send-" + p.name}
			e.note(k, inbox.PriorityUrgent, "CI failed on main")
			woke := e.waitSignals(k, 1)[0]
			e.state(k, a2a.StateWorking)
			e.note(k, inbox.PriorityUrgent, "deploy blocked")
			second := e.waitSignals(k, 2)[1]
			require.Equal(t, agent.BehaviorDeliver, second.Behavior)
			require.Equal(t, woke.RunID, second.RunID, "into the same run")
			got := e.received(k)
			require.Len(t, got, 2)
			require.Equal(t, got[0].TaskID, got[1].TaskID, "into the same task")
			require.Equal(t, second.Signal.ID, got[1].MessageID)
			require.NoError(t, e.h.Release(a2a.ContextID(k)))
			require.Equal(t, agent.RunFinished, e.waitRunClosed(k, woke.RunID))
		})
	}
}

// A task the agent no longer knows (it restarted, its tasks in memory) ended: its run
// is aborted, and its signal is delivered again, marked recovered, as the first message
// of the thread's next task; what woke that run waits for the task to end.
func TestLostTaskEndsItsRunAndItsSignalsGoAgain(t *testing.T) {
	e := newEnv(t, envOpts{path: "hold", noPush: true})
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "lost"}
	e.note(k, inbox.PriorityUrgent, "CI failed on main")
	woke := e.waitSignals(k, 1)[0]
	e.state(k, a2a.StateWorking)
	require.NoError(t, e.h.Forget(a2a.ContextID(k)))
	require.Equal(t, agent.RunAborted, e.waitRunClosed(k, woke.RunID))

	next := e.note(k, inbox.PriorityUrgent, "deploy blocked")
	rec := e.waitSignals(k, 2)[1]
	require.Equal(t, "CI failed on main", rec.Signal.Contents)
	v, _ := rec.Signal.Attributes.Get(delivery.AttrRecovered)
	require.Equal(t, "true", v, "the lost task's signal again, marked recovered")
	require.Equal(t, agent.CauseCrashed, rec.Signal.Metadata[delivery.MetaRecoveredCause])
	got := e.received(k)
	require.Len(t, got, 2)
	require.Equal(t, rec.Signal.ID, got[1].MessageID, "the agent got it again, opening its next task")
	require.Contains(t, got[1].Text(), `recovered="true"`)
	e.waitRecordWaits(next)

	require.NoError(t, e.h.Release(a2a.ContextID(k)))
	require.Equal(t, agent.RunFinished, e.waitRunClosed(k, rec.RunID))
	last := e.waitSignals(k, 3)[2]
	require.Equal(t, "deploy blocked", last.Signal.Contents)
	require.Equal(t, agent.BehaviorWake, last.Behavior)
	require.NoError(t, e.h.Release(a2a.ContextID(k)))
	e.waitRunClosed(k, last.RunID)
}
