package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/signalgate/signalgate/inbox"
)

// ToolSuspended records a Mastra run's suspension on a tool that waits for an answer (a
// `tool-call-suspended` chunk: Mastra's ask_user, or any tool that called suspend) as a
// question and posts it. suspendPayload is what the tool suspended with (ask_user's
// {question, options, selectionMode}). Replays are harmless: the call's first record
// stands.
func (s *Service) ToolSuspended(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, suspendPayload json.RawMessage) {
	s.Question(ctx, OriginMastra, k, runID, toolCallID, tool, suspendPayload)
}

// Question records a runtime's wait for an answer (origin: the runtime's kind, e.g. a
// LangGraph interrupt, an A2A task in input-required) as a question and posts it, once per call id of the thread: a
// replica or a later read asking again gets the first record. payload is what the
// runtime asked with: an object's `question`, or a string, is the question's text.
func (s *Service) Question(ctx context.Context, origin string, k inbox.ThreadKey, runID, callID, tool string, payload json.RawMessage) {
	if callID == "" {
		s.Logger.Warn("question without a call id", "thread", k.String(), "origin", origin)
		return
	}
	a, created, err := s.Request(ctx, Request{Thread: k, Origin: origin, Kind: KindQuestion, RunID: runID,
		ToolCallID: callID, Tool: tool, Arguments: payload, Description: questionOf(payload)})
	if err != nil {
		s.Logger.Error("record question", "thread", k.String(), "tool_call_id", callID, "error", err.Error())
		return
	}
	if created {
		s.Logger.Info("question asked", "approval_id", a.ID, "thread", k.String(), "tool", a.Tool, "origin", origin)
	}
}

// questionOf is the payload's `question` (ask_user's), or the payload itself when it is
// a string; "" when it has neither.
func questionOf(payload json.RawMessage) string {
	var text string
	if json.Unmarshal(payload, &text) == nil {
		return text
	}
	var p struct {
		Question string `json:"question"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Question
}

// Reply is a threaded Slack message that may answer a question.
type Reply struct {
	Connector string
	// Channel and ThreadTS say where it was posted: ThreadTS is the thread's parent
	// message. TS is the reply's own.
	Channel, ThreadTS, TS string
	UserID, UserName      string
	Text                  string
}

// questionsPerThread bounds the questions read to match one reply.
const questionsPerThread = 50

// Answer applies a threaded reply. The first reply by an approver to a pending question
// answers it: the question posted as the thread's parent, or, for a question posted
// inside a thread, the oldest pending one posted before the reply. The run resumes with
// the reply's text as resumeData, once, whatever redeliveries and replicas do. It returns
// what to tell the person privately ("" for nothing: replies in threads that hold no
// pending question are conversation, and later replies change nothing silently).
func (s *Service) Answer(ctx context.Context, r Reply) (string, error) {
	if r.Connector != s.cfg.SlackConnector || r.Channel == "" || r.ThreadTS == "" || r.TS == "" || r.UserID == "" {
		return "", nil
	}
	qs, err := s.Store.QuestionsInThread(ctx, r.Connector, r.Channel, r.ThreadTS, questionsPerThread)
	if err != nil {
		return "", fmt.Errorf("find the question a reply answers: %w", err)
	}
	q, ok := answered(qs, r)
	if !ok || q.Status != StatusPending {
		return "", nil
	}
	approver, err := s.approver(ctx, r.UserID)
	if err != nil {
		return "", fmt.Errorf("check approver: %w", err)
	}
	if !approver {
		s.Logger.Info("reply refused as an answer: not an approver", "approval_id", q.ID, "user", r.UserID)
		return "Sorry, you are not one of the approvers for this agent, so your reply did not answer its question.", nil
	}
	now := s.Now().UTC()
	if !now.Before(q.ExpiresAt) {
		s.expire(ctx, []Approval{q}, "it expired")
		return "This question expired before anyone answered; your reply did not reach the agent.", nil
	}
	text := truncate(r.Text, MaxAnswer)
	got, changed, err := s.Store.AnswerApproval(ctx, q.ID, text, r.UserID, r.UserName, now)
	if err != nil {
		return "", fmt.Errorf("record answer: %w", err)
	}
	if !changed {
		return "", nil // another reply (a redelivery, another replica) answered it first
	}
	if s.Resumer == nil {
		err = errors.New("no Mastra client for questions")
	} else {
		rctx, cancel := context.WithTimeout(ctx, resumeTimeout)
		err = s.Resumer.Answer(rctx, got.ThreadKey, got.ToolCallID, text)
		cancel()
	}
	if err != nil {
		ctx := context.WithoutCancel(ctx)
		reopened, rerr := s.Store.ReopenApproval(ctx, q.ID, StatusAnswered, now)
		if rerr != nil {
			s.Logger.Error("reopen question", "approval_id", q.ID, "error", rerr.Error())
		}
		if errors.Is(err, ErrStale) {
			s.Logger.Info("question stale: the run no longer waits", "approval_id", q.ID, "error", err.Error())
			if reopened {
				s.expire(ctx, []Approval{q}, "the run no longer waits")
			}
			return "The agent's run no longer waits for this answer, so the question has expired.", nil
		}
		s.Logger.Warn("answer not delivered", "approval_id", q.ID, "error", err.Error())
		return "Your answer could not reach the agent just now; the question is still open, please reply again.", nil
	}
	s.Logger.Info("question answered", "approval_id", q.ID, "user", r.UserID)
	s.update(ctx, got)
	return "", nil
}

// answered picks the question r answers among qs (oldest first): the one r's thread
// starts with, else the oldest pending one posted in r's thread before r. ok is false
// when r answers none; the one returned may be no longer pending.
func answered(qs []Approval, r Reply) (Approval, bool) {
	for _, q := range qs {
		if q.MessageTS == r.ThreadTS {
			return q, true
		}
	}
	for _, q := range qs {
		if q.Status == StatusPending && q.ThreadTS == r.ThreadTS && q.MessageTS != "" && tsBefore(q.MessageTS, r.TS) {
			return q, true
		}
	}
	return Approval{}, false
}

// tsBefore compares Slack message timestamps ("1700000000.000100") as numbers.
func tsBefore(a, b string) bool {
	x, okA := new(big.Rat).SetString(strings.TrimSpace(a))
	y, okB := new(big.Rat).SetString(strings.TrimSpace(b))
	return okA && okB && x.Cmp(y) < 0
}
