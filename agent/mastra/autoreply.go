package mastra

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

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

// wokeRun is the gateway run a wake opened and where its answer goes (nil: the wake's
// records named no place).
type wokeRun struct {
	runID string
	to    *reply.To
}

// woken records that the wake delivery of gateway run runID carried replyTo: the run
// the gateway started for it answers there, whatever arrives while it runs. The first
// wake delivery of a run wins (its later signals are deliveries, or retries of it).
func (f *Follower) woken(k inbox.ThreadKey, runID string, replyTo any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	th, ok := f.threads[k]
	if !ok || th.woke.runID == runID {
		return
	}
	th.woke = wokeRun{runID: runID}
	if to, ok := reply.Parse(replyTo); ok {
		th.woke.to = &to
	}
}

// origin is where the answer of st's run goes: the replyTo of the wake that started it;
// nil (the thread's most recent origin) when that is not known here (the run was
// resumed after a restart, or its wake's records named no place).
func (f *Follower) origin(st *threadState) *reply.To {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st.th.woke.runID != st.runID {
		return nil
	}
	return st.th.woke.to
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
	req := reply.Request{ID: id, Text: text, ReplyTo: f.origin(st)}
	if f.queue(ctx, st.k, runID, req) {
		return
	}
	// A failure of the gateway (the store): the answer is retried with backoff until it
	// is queued or found queued already (the same id is the same reply), off the stream.
	k := st.k
	if !f.Go(func(ctx context.Context) { f.requeue(ctx, k, runID, req) }) {
		f.log.Warn("run's answer not queued: the follower is stopping", "thread", k.String(), "mastra_run_id", runID, "reply_id", id)
	}
}

// queue queues req once; done is false when a failure of the gateway may pass.
func (f *Follower) queue(ctx context.Context, k inbox.ThreadKey, runID string, req reply.Request) (done bool) {
	r, err := f.replies.Queue(ctx, k, req)
	_, refused := reply.Code(err)
	switch {
	case err == nil:
		f.log.Info("run's answer queued as a reply", "thread", k.String(), "mastra_run_id", runID, "reply_id", r.ID, "status", string(r.Status))
	case errors.Is(err, reply.ErrUnknownPlace):
		f.log.Info("run's answer not sent: the thread has no place to answer", "thread", k.String(), "mastra_run_id", runID, "error", err.Error())
	case refused:
		f.log.Warn("run's answer refused by the outbox", "thread", k.String(), "mastra_run_id", runID, "error", err.Error())
	default:
		f.log.Warn("queue run's answer as a reply; retrying", "thread", k.String(), "mastra_run_id", runID, "error", err.Error())
		return false
	}
	return true
}

// requeue retries queueing req with the follower's backoff until it is done or the
// follower stops.
func (f *Follower) requeue(ctx context.Context, k inbox.ThreadKey, runID string, req reply.Request) {
	wait := f.min
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.log.Warn("run's answer not queued: the follower stopped", "thread", k.String(), "mastra_run_id", runID, "reply_id", req.ID)
			return
		case <-t.C:
		}
		if f.queue(ctx, k, runID, req) {
			return
		}
		wait = min(wait*2, f.max)
	}
}
