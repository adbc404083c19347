package mastra

import (
	"context"
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
// assistant text of each run the gateway woke as a reply to where its wake came from,
// once per run, before the run's end is recorded.
func WithReplies(r Replier) FollowerOption { return func(f *Follower) { f.replies = r } }

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

// answers reports whether st's run is the gateway's to answer: the agent answers by
// itself and the gateway woke this run (a Mastra-started run, e.g. someone chatting in
// Mastra's own UI, is not).
func (f *Follower) answers(st *threadState) bool {
	return f.replies != nil && f.cfg.Reply == agent.ReplyAuto && st.woken && st.runID != ""
}

// answer queues the run's final text as its reply, when the gateway is to answer it,
// and reports whether the run's end may be recorded: only once the answer is in the
// outbox (or needs none), so an answer is never held in memory alone. False when the
// follower stops first: the run stays open, and the next start answers it from
// Mastra's memory of the thread (recall).
func (f *Follower) answer(ctx context.Context, st *threadState) bool {
	if !f.answers(st) {
		return true
	}
	id := reply.RunAnswerID(st.runID)
	if st.text.over {
		f.log.Warn("run's answer not sent: over the reply size limit", "thread", st.k.String(), "run_id", st.runID,
			"mastra_run_id", st.mastraRun, "limit_bytes", reply.MaxTextBytes)
		return true
	}
	text := strings.TrimSpace(st.text.b.String())
	if text == "" {
		f.log.Debug("run ended without text; no reply", "thread", st.k.String(), "run_id", st.runID, "mastra_run_id", st.mastraRun)
		return true
	}
	return f.hold(ctx, st, reply.Request{ID: id, Text: text, ReplyTo: f.origin(st)})
}

// hold queues req, and while a failure of the gateway (the store) keeps the outbox from
// taking it, tries again with the follower's backoff (the same id is the same reply),
// renewing the run's lease meanwhile so it stays open for a restart to find. False
// when ctx ends before the outbox has it.
func (f *Follower) hold(ctx context.Context, st *threadState, req reply.Request) bool {
	wait := f.min
	for !reply.QueueAnswer(ctx, f.replies, f.log, st.k, req, "run_id", st.runID) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.log.Warn("run's answer not queued before the follower stopped; the run stays open and is answered at the next start",
				"thread", st.k.String(), "run_id", st.runID, "reply_id", req.ID)
			return false
		case <-t.C:
		}
		f.renew(ctx, st)
		wait = min(wait*2, f.max)
	}
	return true
}

// renew extends the lease of the run whose answer is held, at most every heartbeatEvery.
func (f *Follower) renew(ctx context.Context, st *threadState) {
	if f.now().Sub(st.beatAt) < heartbeatEvery {
		return
	}
	st.beatAt = f.now()
	if _, err := f.runs.Heartbeat(ctx, st.k, st.runID); err != nil {
		f.log.Warn("renew the run whose answer waits for the outbox", "thread", st.k.String(), "run_id", st.runID, "error", err.Error())
	}
}
