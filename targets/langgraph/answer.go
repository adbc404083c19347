package langgraph

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// answer queues the final AI message of live, a run the gateway woke, as its reply when
// the agent answers by itself (reply: auto), and reports whether the run's end may be
// recorded: only once the answer is in the outbox (or needs none), so an answer is never
// held in memory alone. When the outbox cannot take it now (a failure of the gateway's
// store) the run stays open, its lease renewed, and the next read (the next poll at the
// latest) answers it again under the same reply id.
func (f *Follower) answer(ctx context.Context, k inbox.ThreadKey, tr *tracked, live *agent.Run) bool {
	if f.replies == nil || f.cfg.Reply != agent.ReplyAuto || live.Origin != agent.OriginWake {
		return true
	}
	msgs, err := f.api.messages(ctx, k)
	if err != nil {
		if agent.DeliveryFailure(err).Retry {
			f.log.Warn("read the run's answer; the run stays open until a later read", "thread", k.String(), "run_id", live.ID, "error", err.Error())
			f.keep(ctx, k, tr, live)
			return false
		}
		f.log.Warn("run's answer not read; no reply", "thread", k.String(), "run_id", live.ID, "error", err.Error())
		return true
	}
	text, ok := finalAnswer(msgs)
	switch {
	case !ok || strings.TrimSpace(text) == "":
		f.log.Debug("run ended without an AI message after its input; no reply", "thread", k.String(), "run_id", live.ID)
		return true
	case len(text) > reply.MaxTextBytes:
		f.log.Warn("run's answer not sent: over the reply size limit", "thread", k.String(), "run_id", live.ID, "limit_bytes", reply.MaxTextBytes)
		return true
	}
	f.mu.Lock()
	woke := tr.woke
	f.mu.Unlock()
	req := reply.Request{ID: reply.RunAnswerID(live.ID), Text: strings.TrimSpace(text)}
	if woke.runID == live.ID {
		req.ReplyTo = woke.to
	}
	if !reply.QueueAnswer(ctx, f.replies, f.log, k, req, "run_id", live.ID) {
		f.keep(ctx, k, tr, live)
		return false
	}
	return true
}

// message is the part of a state message the gateway reads: the API's form
// ({type, content}) or a LangChain-serialised one ({id: [..., "AIMessage"], kwargs}).
type message struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	ID      json.RawMessage `json:"id"`
	Kwargs  *struct {
		Content json.RawMessage `json:"content"`
	} `json:"kwargs"`
}

// finalAnswer is the text of the thread's last message when it is an AI message (the
// run answered its input; a run that failed or answered nothing leaves its input last,
// and an earlier answer is not this run's).
func finalAnswer(msgs []json.RawMessage) (string, bool) {
	if len(msgs) == 0 {
		return "", false
	}
	var m message
	if err := json.Unmarshal(msgs[len(msgs)-1], &m); err != nil {
		return "", false
	}
	content := m.Content
	if m.Kwargs != nil {
		var path []string
		if json.Unmarshal(m.ID, &path) == nil && len(path) > 0 {
			m.Type = path[len(path)-1]
		}
		content = m.Kwargs.Content
	}
	switch m.Type {
	case "ai", "AIMessage", "AIMessageChunk":
	default:
		if m.Role != "assistant" && m.Role != "ai" {
			return "", false
		}
	}
	return contentText(content), true
}

// contentText is a message content's text: a string, or the text blocks of a list.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, raw := range blocks {
		var blk struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &s) == nil {
			b.WriteString(s)
			continue
		}
		if json.Unmarshal(raw, &blk) == nil && (blk.Type == "text" || blk.Type == "") {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}
