package langgraph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/langgraph"
	"github.com/signalgate/signalgate/targets/langgraph/langgraphtest"
)

// TestRealLangGraph runs the target against the real Agent Server (interop/langgraph),
// one server process for every case.
func TestRealLangGraph(t *testing.T) {
	base := langgraphtest.Server(t)
	// held runs stay live until the test releases them (envOptions.hold); tag shows that
	// target.context goes with each run.
	held := langgraph.Config{Context: map[string]any{"tag": "held"}}

	t.Run("an idle thread's wake is one run with the signal's XML, its end closes the run", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: held, hold: true})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "wake"}
		e.note(k, inbox.PriorityUrgent, "CI failed on main")
		first := e.waitSignals(k, 1)[0]
		require.Equal(t, agent.BehaviorWake, first.Behavior)
		require.NotNil(t, e.live(k), "the wake's run is open while LangGraph runs")

		runs := e.lgRuns(k)
		require.Len(t, runs, 1, "exactly one LangGraph run")
		var input struct {
			Messages []struct {
				Role, Content, ID string
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(runs[0].Kwargs.Input, &input))
		require.Len(t, input.Messages, 1)
		require.Equal(t, "user", input.Messages[0].Role)
		require.Equal(t, first.XML, input.Messages[0].Content, "the signal's XML is the run's input")
		require.Equal(t, first.Signal.ID, input.Messages[0].ID)
		require.Equal(t, first.Signal.ID, runs[0].Metadata[langgraph.MetaSignal])
		require.Equal(t, first.RunID, runs[0].Metadata[langgraph.MetaRun])
		require.Equal(t, "held", runs[0].Kwargs.Context["tag"], "target.context goes with the run")

		e.release()
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID), "the run's webhook ends the gateway run")
		th := e.lgThread(k)
		require.Equal(t, "idle", th.Status)
		require.Equal(t, "support", th.Metadata[langgraph.MetaAgent], "the gateway's ids are in the thread's metadata")
		require.Equal(t, "acme/api", th.Metadata[langgraph.MetaResource])
		require.Equal(t, "wake", th.Metadata[langgraph.MetaThread])
		require.Equal(t, []string{"human: " + first.XML, "ai: echo: " + first.XML}, th.texts())
	})

	t.Run("a signal for a running thread is a run enqueued behind it (busy default)", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: held, hold: true, policy: deliverAll()})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "enqueue"}
		e.note(k, inbox.PriorityHigh, "first failure")
		first := e.waitSignals(k, 1)[0]
		e.begins("first failure")
		e.note(k, inbox.PriorityMedium, "second failure")
		second := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.BehaviorDeliver, second.Behavior)
		require.Equal(t, first.RunID, second.RunID, "delivered into the same gateway run")
		runs := e.lgRuns(k)
		require.Len(t, runs, 2)
		require.Equal(t, langgraph.Enqueue, runs[1].MultitaskStrategy)

		e.release()
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID), "closed once both runs ended")
		require.Equal(t, []string{"human: " + first.XML, "ai: echo: " + first.XML, "human: " + second.XML, "ai: echo: " + second.XML},
			e.lgThread(k).texts())
		for _, r := range e.lgRuns(k) {
			require.Equal(t, "success", r.Status)
		}
	})

	t.Run("an urgent signal interrupts the run in flight (busy default)", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: held, hold: true})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "interrupt"}
		e.note(k, inbox.PriorityMedium, "slow work")
		first := e.waitSignals(k, 1)[0]
		e.begins("slow work")
		e.note(k, inbox.PriorityUrgent, "production is down")
		second := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.BehaviorDeliver, second.Behavior)
		runs := e.lgRuns(k)
		require.Len(t, runs, 2)
		require.Equal(t, langgraph.Interrupt, runs[1].MultitaskStrategy)
		// The urgent run begins once the first is cancelled (its held node let go).
		e.begins("production is down")
		e.release()
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID))
		runs = e.lgRuns(k)
		require.Equal(t, "interrupted", runs[0].Status, "the first run was cancelled")
		require.Equal(t, "success", runs[1].Status)
		require.Equal(t, []string{"human: " + first.XML, "human: " + second.XML, "ai: echo: " + second.XML}, e.lgThread(k).texts(),
			"the cancelled run's input stays in the thread")
	})

	t.Run("reject holds the signal until the run ends, then it wakes the thread", func(t *testing.T) {
		t.Parallel()
		settings := held
		settings.Busy = langgraph.Busy{Default: langgraph.Reject}
		e := newEnv(t, base, envOptions{settings: settings, hold: true})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "reject"}
		e.note(k, inbox.PriorityUrgent, "first page")
		first := e.waitSignals(k, 1)[0]
		e.begins("first page")
		id := e.note(k, inbox.PriorityUrgent, "second page")
		// Held, not sent: the record waits for the thread to be idle.
		e.waitRecord(id, func(r inbox.Record) bool { return r.FullWhenIdle })
		require.Len(t, e.signals(k), 1)
		require.Len(t, e.lgRuns(k), 1, "no run while one is in flight")
		require.Zero(t, e.env.Record(id).Attempts, "a hold is not an attempt")

		e.release()
		second := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID))
		require.Equal(t, agent.BehaviorWake, second.Behavior, "the held signal wakes the idle thread")
		require.NotEqual(t, first.RunID, second.RunID)
		require.Contains(t, second.XML, "second page")
		runs := e.lgRuns(k)
		require.Len(t, runs, 2)
		require.Equal(t, agent.RunFinished, e.waitClosed(k, second.RunID))
	})

	t.Run("high while running: a summary now, the held notification once the run ends", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: held, hold: true, policy: inbox.PolicyConfig{SummaryInterval: 10 * time.Millisecond}})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "held"}
		e.note(k, inbox.PriorityUrgent, "check failed")
		first := e.waitSignals(k, 1)[0]
		e.begins("check failed")
		e.note(k, inbox.PriorityHigh, "review requested")
		summary := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.TagNotificationSummary, summary.Signal.TagName)
		require.Equal(t, agent.BehaviorDeliver, summary.Behavior, "the summary goes into the running thread")
		e.release()
		frames := e.waitSignals(k, 3)
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID))
		full := frames[2]
		require.Equal(t, agent.TagNotification, full.Signal.TagName)
		require.Contains(t, full.XML, "review requested")
		require.Equal(t, agent.BehaviorWake, full.Behavior, "the full notification went out when the thread turned idle")
		require.Equal(t, agent.RunFinished, e.waitClosed(k, full.RunID))
	})

	t.Run("interrupt(): a question, signals held meanwhile, the answer resumes the run", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: langgraph.Config{Context: map[string]any{"delay_ms": 10}}, reply: agent.ReplyAuto})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "question"}
		e.note(k, inbox.PriorityUrgent, "deploy? ask-user")
		first := e.waitSignals(k, 1)[0]
		q := <-e.asks.asked
		require.Equal(t, approval.OriginLangGraph, q.origin)
		require.Equal(t, k, q.thread)
		require.Equal(t, first.RunID, q.runID, "the question belongs to the gateway run")
		require.Equal(t, langgraph.InterruptTool, q.tool)
		require.JSONEq(t, `{"question":"ask-user","last":`+jsonString(first.XML)+`}`, string(q.payload))
		th := e.lgThread(k)
		require.Equal(t, "interrupted", th.Status)
		require.NotNil(t, e.live(k), "a thread waiting on a person is busy")

		// A signal meanwhile would drop the question: it waits.
		id := e.note(k, inbox.PriorityUrgent, "another page")
		e.waitRecord(id, func(r inbox.Record) bool { return r.FullWhenIdle })
		require.Len(t, e.lgRuns(k), 1)

		require.ErrorIs(t, e.client.Answer(context.Background(), k, "not-"+q.callID, "x"), approval.ErrStale)
		require.NoError(t, e.client.Answer(context.Background(), k, q.callID, "yes, go"))
		second := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID))
		require.Contains(t, second.XML, "another page")
		require.Equal(t, agent.BehaviorWake, second.Behavior)
		got := <-e.replies.queued
		require.Equal(t, reply.RunAnswerID(first.RunID), got.ID)
		require.Equal(t, "answer: yes, go", got.Text, "the resumed run's answer is the woken run's reply")
		require.Equal(t, agent.RunFinished, e.waitClosed(k, second.RunID))
		require.Equal(t, []string{"human: " + first.XML, "ai: answer: yes, go", "human: " + second.XML, "ai: echo: " + second.XML},
			e.lgThread(k).texts())
		require.ErrorIs(t, e.client.Answer(context.Background(), k, q.callID, "again"), approval.ErrStale, "answered already")
	})

	t.Run("a run that fails closes the gateway run as crashed; LangGraph keeps what it accepted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: langgraph.Config{Context: map[string]any{"delay_ms": 10}}})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "error"}
		e.note(k, inbox.PriorityUrgent, "please fail-run")
		first := e.waitSignals(k, 1)[0]
		require.Equal(t, agent.RunAborted, e.waitClosed(k, first.RunID))
		require.Equal(t, "error", e.lgThread(k).Status)
		pending, err := store.NewQueue(e.env.Store).PendingRecoveries(context.Background(), k, 10)
		require.NoError(t, err)
		require.Empty(t, pending, "the failed run's input is in LangGraph's state: not sent again")
		e.note(k, inbox.PriorityUrgent, "after the failure")
		second := e.waitSignals(k, 2)[1]
		require.Equal(t, agent.BehaviorWake, second.Behavior)
		require.Equal(t, agent.RunFinished, e.waitClosed(k, second.RunID))
	})

	t.Run("without a webhook, polling sees the run end", func(t *testing.T) {
		t.Parallel()
		settings := langgraph.Config{Context: map[string]any{"delay_ms": 10}, PollInterval: time.Second}
		e := newEnv(t, base, envOptions{settings: settings, noWebhook: true})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "polled"}
		e.note(k, inbox.PriorityUrgent, "no webhook")
		first := e.waitSignals(k, 1)[0]
		require.Empty(t, e.lgRuns(k)[0].Kwargs.Webhook)
		require.Equal(t, agent.RunFinished, e.waitClosed(k, first.RunID))
	})

	t.Run("a logged signal is written into the thread's state without a run", func(t *testing.T) {
		t.Parallel()
		policy := inbox.PolicyConfig{Priorities: map[inbox.Priority]inbox.ActionSpec{inbox.PriorityLow: {Action: inbox.ActionLog}}}
		e := newEnv(t, base, envOptions{settings: held, policy: policy})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "logged"}
		e.note(k, inbox.PriorityLow, "for the record")
		logged := e.waitSignals(k, 1)[0]
		require.Equal(t, agent.BehaviorPersist, logged.Behavior)
		require.Empty(t, e.lgRuns(k), "no run")
		require.Equal(t, []string{"human: " + logged.XML}, e.lgThread(k).texts())
		require.Nil(t, e.live(k))
	})

	t.Run("the webhook endpoint takes only URLs the gateway signed", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: held})
		path := e.hooks.URL + langgraph.WebhookPath("support")
		for _, tc := range []struct {
			query string
			want  int
		}{
			{"", http.StatusBadRequest},
			{"?resource=r&thread=t&run=x&sig=forged", http.StatusUnauthorized},
		} {
			resp, err := http.Post(path+tc.query, "text/plain", strings.NewReader(`{"run_id":"x","status":"success"}`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode, tc.query)
		}
	})

	t.Run("aborting a thread cancels its LangGraph run", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: langgraph.Config{Context: map[string]any{"delay_ms": 30000}}})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "abort"}
		e.note(k, inbox.PriorityUrgent, "long job")
		first := e.waitSignals(k, 1)[0]
		e.begins("long job")
		rr, ok, err := e.follower.RuntimeRun(context.Background(), k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, agent.RuntimeRun{Kind: langgraph.Kind, Thread: langgraph.ThreadID(k), Status: "busy", Term: "run", Run: e.lgRuns(k)[0].RunID,
			RunStatus: "running"}, rr, "what the console shows")
		require.NoError(t, e.client.AbortThread(context.Background(), k, false))
		e.waitClosed(k, first.RunID)
		require.Equal(t, "interrupted", e.lgRuns(k)[0].Status)
	})

	t.Run("a transient signal starts a run and is never logged", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, base, envOptions{settings: langgraph.Config{Context: map[string]any{"delay_ms": 10}}})
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "transient"}
		var resp struct {
			Action string `json:"action"`
			RunID  string `json:"runId"`
		}
		require.Equal(t, http.StatusOK, e.env.Do(http.MethodPost, e.env.ThreadURL(k, "/signals"), deliverytest.SupportToken,
			map[string]any{"signal": map[string]any{"type": "reactive", "tagName": "ping", "contents": "transient ping", "transient": true}}, &resp))
		require.Equal(t, "wake", resp.Action)
		runs := e.lgRuns(k)
		require.Len(t, runs, 1)
		require.Contains(t, string(runs[0].Kwargs.Input), "transient ping")
		require.Equal(t, agent.RunFinished, e.waitClosed(k, resp.RunID))
		require.Empty(t, e.signals(k), "a transient signal is not in the thread's log")
	})

	t.Run("check --connect reads the assistant", func(t *testing.T) {
		t.Parallel()
		out, err := langgraph.Probe(context.Background(), http.DefaultClient, langgraph.Config{URL: base, AssistantID: "echo"}, 5*time.Second, "agents[0].target")
		require.NoError(t, err)
		require.Contains(t, out, "assistant echo (graph echo) answers at "+base)
		_, err = langgraph.Probe(context.Background(), http.DefaultClient, langgraph.Config{URL: base, AssistantID: "nope"}, 5*time.Second, "agents[0].target")
		require.ErrorContains(t, err, "check agents[0].target.assistant_id")
	})
}

// deliverAll delivers every notification in full at once, active thread or idle.
func deliverAll() inbox.PolicyConfig {
	return inbox.PolicyConfig{Default: &inbox.ActionSpec{Action: inbox.ActionDeliver}}
}

func jsonString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
