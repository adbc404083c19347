// Package a2a reaches agents that speak the Agent2Agent protocol (A2A) over JSON-RPC:
// v1.0's SendMessage, or v0.3's message/send for agents whose card declares only that.
// The agent card, read on first use (again after a reload, and after the endpoint fails
// as a moved one does), names the endpoint and what the agent can do.
//
// A gateway thread is one A2A context (ContextID). Each signal is one message send whose
// messageId is the signal's id and whose parts are the signal's XML (text) and the
// signal as the gateway logs it (data). The wake of an idle thread opens a task; the
// task's states are the thread's presence (Tasks). A signal for a thread whose task
// works waits for it to end (target.busy: wait), or goes into it with the task's id
// (busy: send); one context never has two tasks of the gateway's at once.
//
// A2A does not deduplicate message ids: a send whose answer was lost is looked for among
// the context's tasks before it is sent again (v1.0's ListTasks; a v0.3 agent cannot be
// asked, so it may see that signal twice).
package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
)

// Target delivers to one A2A agent; its Tasks follow what it opens.
type Target struct {
	tasks *Tasks
}

var _ delivery.Target = (*Target)(nil)

// NewTarget builds the target of the agent tasks follows: they share its card, its
// client and its task records.
func NewTarget(tasks *Tasks) (*Target, error) {
	if tasks.err != nil {
		return nil, tasks.err
	}
	return &Target{tasks: tasks}, nil
}

// MetadataSignalID is the message metadata key carrying the gateway's signal id (also
// the message's messageId).
const MetadataSignalID = "signalgateSignalId"

// signalData is the signal as the message's data part carries it: what the gateway
// logged, with the thread it went to.
type signalData struct {
	Type       string         `json:"type"` // always "signal"
	Agent      string         `json:"agent"`
	ResourceID string         `json:"resourceId"`
	ThreadID   string         `json:"threadId"`
	RunID      string         `json:"runId,omitempty"`
	Action     agent.Behavior `json:"action"`
	DeliverAs  string         `json:"deliverAs,omitempty"`
	Attempt    int            `json:"attempt"`
	RecordIDs  []string       `json:"recordIds"`
	Signal     agent.Signal   `json:"signal"`
}

func (t *Target) message(d agent.Handoff, contextID, taskID string) outMessage {
	data := signalData{Type: "signal", Agent: d.Thread.Agent, ResourceID: d.Thread.Resource, ThreadID: d.Thread.Thread,
		RunID: d.RunID, Action: d.Behavior, DeliverAs: d.DeliverAs, Attempt: d.Attempt, RecordIDs: d.RecordIDs, Signal: d.Signal}
	if data.RecordIDs == nil {
		data.RecordIDs = []string{}
	}
	if data.Signal.Attributes == nil {
		data.Signal.Attributes = inbox.Attributes{}
	}
	if data.Signal.Metadata == nil {
		data.Signal.Metadata = map[string]any{}
	}
	return outMessage{MessageID: d.Signal.ID, ContextID: contextID, TaskID: taskID, Text: d.Signal.XML(), Data: data,
		Metadata: map[string]any{MetadataSignalID: d.Signal.ID}}
}

// waitIdle is the answer for a signal the thread's task cannot take now.
func waitIdle(why string) error { return fmt.Errorf("%s: %w", why, agent.ErrHoldUntilIdle) }

// Deliver sends d. A signal for a run without a task opens one (the wake, or what the
// run's recovery delivers first); one for a run whose task works waits for it to end
// (busy: wait) or goes into it (busy: send). A persisted signal, and a low-only summary
// no task waits for, are logged in the gateway's thread only: A2A has no way to hand an
// agent a message without making it work.
func (t *Target) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	if d.Behavior == agent.BehaviorPersist {
		return agent.Result{}, nil
	}
	if d.RunID == "" {
		return agent.Result{}, fmt.Errorf("signal %s: an a2a target delivers into a run (none given)", d.Signal.ID)
	}
	cid := ContextID(d.Thread)
	rec, found, err := t.tasks.states.load(ctx, cid)
	if err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: err, Retry: true}
	}
	if found && rec.RunID == d.RunID {
		if rec.TaskID == "" && rec.Sending != "" {
			if rec, err = t.lostSend(ctx, d, cid, rec); err != nil {
				return agent.Result{}, err
			}
		}
		if rec.TaskID != "" {
			return t.busy(ctx, d, cid, rec)
		}
	}
	if d.NoWake {
		return agent.Result{}, nil
	}
	return t.open(ctx, d, cid)
}

// lostSend finds the task of a send whose answer was never read (a timeout after the
// agent took it, a crash): v1.0 lists the context's tasks; a v0.3 agent cannot be asked,
// and the send is made again.
func (t *Target) lostSend(ctx context.Context, d agent.Handoff, cid string, rec taskRecord) (taskRecord, error) {
	card, err := t.tasks.conn.card(ctx)
	if err != nil {
		return rec, err
	}
	found, err := t.tasks.conn.findSent(ctx, card, cid, rec.Sending)
	if err != nil {
		return rec, fmt.Errorf("look for the task of an earlier send: %w", err)
	}
	if found == nil {
		return rec, nil
	}
	rec.TaskID, rec.Sending = found.ID, ""
	if err := t.tasks.states.save(ctx, cid, rec); err != nil {
		return rec, &agent.DeliveryError{Err: err, Retry: true}
	}
	t.tasks.observe(ctx, d.Thread, rec, found.snapshot(), "answer")
	return rec, nil
}

// open sends d with no task id: the agent opens a task for it in the thread's context,
// registering the gateway's push endpoint when the card says the agent pushes.
func (t *Target) open(ctx context.Context, d agent.Handoff, cid string) (agent.Result, error) {
	card, err := t.tasks.conn.card(ctx)
	if err != nil {
		return agent.Result{}, err
	}
	woken := d.Behavior == agent.BehaviorWake
	if !woken {
		// Into a run a wake opened whose send failed, or that recovery delivers into first.
		run, err := t.tasks.runs.Live(ctx, d.Thread)
		if err != nil {
			return agent.Result{}, &agent.DeliveryError{Err: err, Retry: true}
		}
		if run == nil || run.ID != d.RunID {
			// The run ended meanwhile (its task finished during this pass): the thread is
			// idle, and what waits for idle wakes it.
			return agent.Result{}, waitIdle("the run ended")
		}
		woken = run.Origin == agent.OriginWake
	}
	token, err := newToken()
	if err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: err, Retry: true}
	}
	rec := taskRecord{Resource: d.Thread.Resource, Thread: d.Thread.Thread, RunID: d.RunID, Token: token, Sending: d.Signal.ID,
		Woken: woken, OpenedAt: t.tasks.now().UTC()}
	if d.ReplyTo != nil {
		if raw, err := json.Marshal(d.ReplyTo); err == nil {
			rec.ReplyTo = raw
		}
	}
	// Recorded before the send: the token verifies a notification that comes before the
	// answer, and a crash during the send leaves what was being sent.
	if err := t.tasks.states.save(ctx, cid, rec); err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: err, Retry: true}
	}
	var push *pushConfig
	if u := t.tasks.cfg.pushURL(t.tasks.cfg.Agent); u != "" && card.PushNotifications {
		push = &pushConfig{URL: u, Token: token}
	}
	tk, msg, res, err := t.tasks.conn.send(ctx, card, t.message(d, cid, ""), push)
	if err != nil {
		return res, err
	}
	rec.Sending = ""
	if tk == nil {
		// The agent answered at once and opened no task: the run ends with its answer.
		if err := t.tasks.states.save(ctx, cid, rec); err != nil {
			t.tasks.log.Warn("record a send answered at once", "thread", d.Thread.String(), "error", err.Error())
		}
		t.tasks.answeredAtOnce(ctx, d.Thread, rec, d.Signal.ID, msg)
		return res, nil
	}
	rec.TaskID = tk.ID
	if err := t.tasks.states.save(ctx, cid, rec); err != nil {
		// The task is followed here all the same; only a restart before it ends loses it
		// (its run then ends by its lease).
		t.tasks.log.Warn("record the task a send opened", "thread", d.Thread.String(), "task_id", tk.ID, "error", err.Error())
	}
	t.tasks.observe(ctx, d.Thread, rec, tk.snapshot(), "answer")
	return res, nil
}

// busy is d for a run whose task rec names: held until the task ends, or sent into it.
func (t *Target) busy(ctx context.Context, d agent.Handoff, cid string, rec taskRecord) (agent.Result, error) {
	tr := t.tasks.current(d.Thread)
	state := ""
	if tr != nil {
		tr.mu.Lock()
		if tr.rec.TaskID == rec.TaskID {
			state = tr.state
			if tr.ended {
				state = stateGone
			}
		}
		tr.mu.Unlock()
	}
	if terminal(state) {
		return agent.Result{}, waitIdle("the thread's task is ending")
	}
	if t.tasks.cfg.Busy.ForHandoff(d) != BusySend {
		if d.NoWake {
			return agent.Result{}, nil // a low-only summary never waits for a wake
		}
		return agent.Result{}, waitIdle("the thread's task works (target.busy: wait)")
	}
	card, err := t.tasks.conn.card(ctx)
	if err != nil {
		return agent.Result{}, err
	}
	if state == "" {
		got, err := t.tasks.conn.get(ctx, card, rec.TaskID)
		switch {
		case rpcCode(err) == codeTaskNotFound:
			state = stateGone
			t.tasks.observe(ctx, d.Thread, rec, snapshot{TaskID: rec.TaskID, ContextID: cid, State: stateGone}, "answer")
		case err != nil:
			return agent.Result{}, err
		default:
			s := got.snapshot()
			state = s.State
			t.tasks.observe(ctx, d.Thread, rec, s, "answer")
		}
	}
	if terminal(state) {
		return agent.Result{}, waitIdle("the thread's task ended")
	}
	if asks(state) {
		// A message now would be taken for the answer people are asked for.
		return agent.Result{}, waitIdle("the thread's task waits for people")
	}
	tk, _, res, err := t.tasks.conn.send(ctx, card, t.message(d, cid, rec.TaskID), nil)
	if ended(err) {
		// The task ended since it was last seen: the next poll finds how.
		t.tasks.pollSoon(d.Thread)
		return agent.Result{}, waitIdle("the thread's task ended")
	}
	if err != nil {
		return res, err
	}
	if tk != nil {
		t.tasks.observe(ctx, d.Thread, rec, tk.snapshot(), "answer")
	}
	return res, nil
}

// answeredAtOnce ends the run of a send the agent answered with a message, opening no
// task: the message is the run's answer.
func (t *Tasks) answeredAtOnce(ctx context.Context, k inbox.ThreadKey, rec taskRecord, signalID string, msg *message) {
	rec.TaskID = "message-" + signalID
	tr := &tracked{rec: rec, contextID: ContextID(k)}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	// Not polled (there is no task to ask about): a failure to record the end leaves the
	// run to its lease.
	t.end(ctx, k, tr, snapshot{TaskID: rec.TaskID, State: StateCompleted, Text: msg.text(), Complete: true})
}

// pollSoon makes k's task due for a poll now.
func (t *Tasks) pollSoon(k inbox.ThreadKey) {
	t.mu.Lock()
	if tr, ok := t.tracked[k]; ok {
		tr.nextPoll = time.Time{}
	}
	t.mu.Unlock()
	t.kick.Kick()
}
