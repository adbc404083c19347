package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
)

// callPrefix starts the call id of a task's question; the task id follows, then the
// transition's hash.
const callPrefix = "a2a:"

// questionCall is the call id of the question task taskID asks in transition: unique in
// the thread, the same on every replica that sees the state, and holding the task id
// the answer goes to. ok is false for a task id too long to hold.
func questionCall(taskID, transition string) (string, bool) {
	id := callPrefix + taskID + ":" + shortHash(transition)
	if len(id) > approval.MaxCallID || strings.Contains(taskID, ":") {
		return "", false
	}
	return id, true
}

// taskOfCall is the task id a question's call id holds.
func taskOfCall(call string) (string, bool) {
	rest, ok := strings.CutPrefix(call, callPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// shortHash is 16 hex digits of s's SHA-256.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// questionPayload is what a task's question shows and keeps: its question is the status
// message the agent asked with.
type questionPayload struct {
	Question  string `json:"question"`
	State     string `json:"state"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
}

// ask asks people the question of s (the task's status message), once per transition:
// another replica seeing the same state asks the same call, which the approvals store
// keeps once. A new question of the same task ends the one before.
func (t *Tasks) ask(ctx context.Context, k inbox.ThreadKey, tr *tracked, s snapshot) {
	prev := tr.asked
	tr.asked = s.transition()
	if t.questions == nil {
		t.log.Info("task waits for input, and approvals are off: answer it in the agent's own client", "thread", k.String(),
			"task_id", tr.rec.TaskID, "state", s.State)
		return
	}
	if prev != "" {
		if old, ok := questionCall(tr.rec.TaskID, prev); ok {
			t.questions.ToolAnswered(ctx, k, old)
		}
	}
	call, ok := questionCall(tr.rec.TaskID, tr.asked)
	if !ok {
		t.log.Warn("task waits for input, but its id is too long to ask about in Slack", "thread", k.String(), "task_id", tr.rec.TaskID)
		return
	}
	q := s.Text
	if q == "" {
		q = "The agent's task needs input to go on."
		if s.State == StateAuthRequired {
			q = "The agent's task needs someone to authorize it."
		}
	}
	payload, err := json.Marshal(questionPayload{Question: q, State: s.State, TaskID: tr.rec.TaskID, ContextID: tr.contextID})
	if err != nil {
		return
	}
	t.questions.Question(ctx, approval.OriginA2A, k, tr.rec.TaskID, call, s.State, payload)
}

// Answers answers the questions of the agents' tasks (approval.Resumer): a message with
// the task's id whose text is the reply, as an A2A client answers input-required.
type Answers struct {
	conns map[string]*conn
}

var _ approval.Resumer = (*Answers)(nil)

// NewAnswers builds the answers for the configured a2a agents (others are skipped).
func NewAnswers(cfgs []agent.Config, hc *http.Client) *Answers {
	a := &Answers{conns: map[string]*conn{}}
	for _, cfg := range cfgs {
		if s, err := settingsOf(cfg); err == nil {
			a.conns[cfg.ID] = newConn(s, hc, time.Now)
		}
	}
	return a
}

// SendToolApproval: A2A tasks ask questions, never tool approvals.
func (a *Answers) SendToolApproval(context.Context, inbox.ThreadKey, string, bool) error {
	return fmt.Errorf("%w: an A2A task asks questions, not tool approvals", approval.ErrStale)
}

// answerNamespace names the message ids of answers.
func answerNamespace() uuid.UUID { return uuid.MustParse("5e0a2a41-7c1d-5f0e-8b6a-a2a0a45e4e11") }

// Answer sends the reply to the question call asked: a message carrying the task's id
// and the context's. A task that no longer takes it (ended, unknown to the agent) is
// approval.ErrStale.
func (a *Answers) Answer(ctx context.Context, k inbox.ThreadKey, call string, resumeData any) error {
	taskID, ok := taskOfCall(call)
	if !ok {
		return fmt.Errorf("%w: %q is not an A2A task's question", approval.ErrStale, call)
	}
	c, ok := a.conns[k.Agent]
	if !ok {
		return fmt.Errorf("agent %q is not an a2a agent", k.Agent)
	}
	card, err := c.card(ctx)
	if err != nil {
		return fmt.Errorf("answer the task's question: %w", err)
	}
	text := fmt.Sprint(resumeData)
	m := outMessage{MessageID: uuid.NewSHA1(answerNamespace(), []byte(call+"\x00"+text)).String(), ContextID: ContextID(k),
		TaskID: taskID, Text: text, Metadata: map[string]any{"signalgateAnswers": call}}
	_, _, _, err = c.send(ctx, card, m, nil)
	switch {
	case ended(err):
		return fmt.Errorf("%w: %w", approval.ErrStale, err)
	case err != nil:
		return fmt.Errorf("answer the task's question: %w", err)
	}
	return nil
}
