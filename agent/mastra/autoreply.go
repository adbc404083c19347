package mastra

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// Replier queues a reply (reply.Service): target.reply: auto hands it each finished
// woken run's final assistant text.
type Replier interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
}

// WithReplies makes a follower of an agent with target.reply: auto queue the final
// assistant text of each run the gateway woke as a reply to the thread's most recent
// origin, once per Mastra run id.
func WithReplies(r Replier) FollowerOption { return func(f *Follower) { f.replies = r } }

// AutoReplyID is the reply id of Mastra run runID's answer: the same run seen again
// (a reconnect replays it) queues the same reply, which the outbox takes once.
func AutoReplyID(runID string) string {
	id := "run-" + runID
	if !reply.ValidID(id) {
		sum := sha256.Sum256([]byte(runID))
		id = "run-" + hex.EncodeToString(sum[:16])
	}
	return id
}

// answer is a step's streamed assistant text, bounded by what the outbox takes at all:
// a longer one is kept whole enough for the outbox to refuse it with a clear error.
type answer struct {
	b    strings.Builder
	over bool
}

func (a *answer) reset() { a.b.Reset(); a.over = false }

func (a *answer) add(s string) {
	if a.over || a.b.Len()+len(s) > reply.MaxTextBytes {
		a.over = true
		return
	}
	a.b.WriteString(s)
}

// answer queues the run's final text as its reply when the agent answers by itself and
// the gateway woke this run (a Mastra-started run, e.g. someone chatting in Mastra's own
// UI, is not the gateway's to answer).
func (f *Follower) answer(ctx context.Context, st *threadState) {
	if f.replies == nil || f.cfg.Reply != agent.ReplyAuto || !st.woken {
		return
	}
	runID := cmp.Or(st.mastraRun, st.runID)
	id := AutoReplyID(runID)
	if st.text.over {
		f.log.Warn("run's answer not sent: over the reply size limit", "thread", st.k.String(), "mastra_run_id", runID, "limit_bytes", reply.MaxTextBytes)
		return
	}
	text := strings.TrimSpace(st.text.b.String())
	if text == "" {
		f.log.Debug("run ended without text; no reply", "thread", st.k.String(), "mastra_run_id", runID)
		return
	}
	r, err := f.replies.Queue(ctx, st.k, reply.Request{ID: id, Text: text})
	switch {
	case err == nil:
		f.log.Info("run's answer queued as a reply", "thread", st.k.String(), "mastra_run_id", runID, "reply_id", r.ID, "status", string(r.Status))
	case errors.Is(err, reply.ErrUnknownPlace):
		f.log.Info("run's answer not sent: the thread has no place to answer", "thread", st.k.String(), "mastra_run_id", runID, "error", err.Error())
	default:
		f.log.Warn("queue run's answer as a reply", "thread", st.k.String(), "mastra_run_id", runID, "error", err.Error())
	}
}
