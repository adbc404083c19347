package mastra

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Reading a run's answer back from Mastra's memory.
const (
	// recallMessages is how many of the thread's newest messages are read: the newest
	// is the answer, the others guard against a server that orders them oldest first.
	recallMessages = 5
	// recallSkew is how much older than its run (by the gateway's clock) a recalled
	// answer may look (by Mastra's) and still be taken for the run's.
	recallSkew = 5 * time.Second
)

// recall answers a woken run that ended while the follower was away (the gateway
// stopped, maybe with the answer still waiting for the outbox; or the stream was lost):
// the thread's newest message in Mastra's memory, when it is the agent's (an assistant
// message) and no older than the run, is the run's final text. It reports, as answer
// does, whether the run's end may be recorded: false only when the follower stops
// before the answer is queued. A Mastra that cannot say (no memory, the thread unknown)
// answers nothing, logged.
func (f *Follower) recall(ctx context.Context, st *threadState) bool {
	if !f.answers(st) {
		return true
	}
	wait := f.min
	for {
		text, err := f.lastAnswer(ctx, st)
		if err == nil {
			if text == "" {
				f.log.Info("run ended while away without an answer in Mastra's memory; no reply", "thread", st.k.String(), "run_id", st.runID)
				return true
			}
			if len(text) > reply.MaxTextBytes {
				f.log.Warn("run's answer not sent: over the reply size limit", "thread", st.k.String(), "run_id", st.runID, "limit_bytes", reply.MaxTextBytes)
				return true
			}
			return f.hold(ctx, st, reply.Request{ID: reply.RunAnswerID(st.runID), Text: text, ReplyTo: f.origin(st)})
		}
		if !agent.DeliveryFailure(err).Retry {
			f.log.Warn("run's answer not recalled from Mastra's memory; no reply", "thread", st.k.String(), "run_id", st.runID, "error", err.Error())
			return true
		}
		f.log.Warn("recall run's answer from Mastra's memory; retrying", "thread", st.k.String(), "run_id", st.runID, "error", err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		f.renew(ctx, st)
		wait = min(wait*2, f.max)
	}
}

// memoryMessage is the part of a message of Mastra's memory (GET
// /api/memory/threads/:threadId/messages) recall reads.
type memoryMessage struct {
	Role      string          `json:"role"`
	CreatedAt time.Time       `json:"createdAt"`
	Content   json.RawMessage `json:"content"`
}

// lastAnswer reads the text of st's run's answer from Mastra's memory: "" when the
// thread's newest message is not an answer of this run. A failure is an
// *agent.DeliveryError saying whether trying again may help.
func (f *Follower) lastAnswer(ctx context.Context, st *threadState) (string, error) {
	q := url.Values{"agentId": {f.cfg.AgentID}, "resourceId": {st.k.Resource}, "page": {"0"},
		"perPage": {fmt.Sprint(recallMessages)}, "orderBy": {`{"field":"createdAt","direction":"DESC"}`}}
	u := strings.TrimRight(f.cfg.URL, "/") + "/api/memory/threads/" + url.PathEscape(st.k.Thread) + "/messages?" + q.Encode()
	raw, _, err := httptarget.Get(ctx, f.client, u, secret.RevealMap(f.cfg.Headers), f.cfg.Timeout, f.now)
	if err != nil {
		return "", fmt.Errorf("read the thread's messages: %w", err)
	}
	var body struct {
		Messages []memoryMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return "", &agent.DeliveryError{Err: fmt.Errorf("read the thread's messages: unreadable answer: %w", err)}
	}
	// Mastra answers the newest page oldest first: the newest is the latest created, the
	// last of equals.
	var newest *memoryMessage
	for i := range body.Messages {
		if m := &body.Messages[i]; newest == nil || !m.CreatedAt.Before(newest.CreatedAt) {
			newest = m
		}
	}
	if newest == nil || newest.Role != "assistant" || newest.CreatedAt.Before(st.openedAt.Add(-recallSkew)) {
		return "", nil
	}
	return strings.TrimSpace(finalText(newest.Content)), nil
}

// finalText is the text of an assistant message's last step, as the thread stream's
// text-delta chunks after the last step-start carry it: Mastra's format 2 keeps a step's
// start as a step-start part. A plain string is the whole text.
func finalText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var c struct {
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	if len(c.Parts) == 0 {
		return c.Content
	}
	var b strings.Builder
	for _, p := range c.Parts {
		switch p.Type {
		case "step-start":
			b.Reset()
		case "text":
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
