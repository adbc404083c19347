package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// Hosted is one hosted agent's target: deliveries (Deliver), presence (the webhook
// endpoint, Mount, and the poll of open runs, Start/Stop) and the calls the gateway
// makes beside them (RuntimeRun, AbortThread, SendToolApproval).
type Hosted struct {
	// TestSignals are for tests; they do nothing unless a test initialises them.
	TestSignals Signals

	kind, agentID string
	origin        string // the approvals' origin
	api           API
	sessions      Store
	runs          Presence
	notify        func([]inbox.ThreadKey)
	approvals     Approvals
	replies       Replier
	replyAuto     bool
	dialect       Dialect
	key           []byte
	poll          time.Duration
	grace         time.Duration
	log           *slog.Logger
	now           func() time.Time

	service.StartStop
	mu    sync.Mutex
	locks map[inbox.ThreadKey]chan struct{}
	woke  map[inbox.ThreadKey]wokeRun
}

// wokeRun is the gateway run a wake opened and where its answer goes.
type wokeRun struct {
	runID string
	to    *reply.To
}

// Signals are the points of a target's work tests wait on.
type Signals struct {
	// Reconciled: a thread was read and its run set to match (after a webhook or a poll).
	Reconciled service.Signal[Reconciled]
}

// Reconciled is one read of a thread's session.
type Reconciled struct {
	Thread inbox.ThreadKey
	State  State
	Closed bool
}

var _ delivery.Target = (*Hosted)(nil)

// Deps are what a Hosted works with.
type Deps struct {
	API      API
	Sessions Store
	Runs     Presence
	Notify   func([]inbox.ThreadKey)
	// Approvals, if set, asks the actions sessions wait on in Slack.
	Approvals Approvals
	// Replies, if set with reply auto, queues each woken turn's last message.
	Replies Replier
}

// Spec is one hosted agent as its kind sees it.
type Spec struct {
	Kind    string
	Agent   agent.Config
	Origin  string
	Dialect Dialect
	Common  Common
}

// New builds the target of spec's agent.
func New(spec Spec, deps Deps, base service.Base) (*Hosted, error) {
	a := spec.Agent.WithDefaults()
	key, err := parseKey(spec.Common.WebhookSecret.Reveal())
	if err != nil {
		return nil, fmt.Errorf("agent %q: target.webhook_secret: %w", a.ID, err)
	}
	if spec.Common.PollInterval >= a.RunLease {
		return nil, fmt.Errorf("agent %q: target.poll_interval (%s) must be shorter than run_lease (%s): polling renews the open runs",
			a.ID, spec.Common.PollInterval, a.RunLease)
	}
	base = base.Component(spec.Kind+"_target", "agent", a.ID)
	now := base.Now
	if now == nil {
		now = time.Now
	}
	h := &Hosted{kind: spec.Kind, agentID: a.ID, origin: spec.Origin, api: deps.API, sessions: deps.Sessions, runs: deps.Runs,
		notify: deps.Notify, approvals: deps.Approvals, replies: deps.Replies, replyAuto: a.Target.Reply == agent.ReplyAuto,
		dialect: spec.Dialect, key: key, poll: spec.Common.PollInterval, grace: 2*a.Target.Timeout + spec.Common.PollInterval,
		log: base.Logger, now: now, locks: map[inbox.ThreadKey]chan struct{}{}, woke: map[inbox.ThreadKey]wokeRun{}}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.notify == nil {
		h.notify = func([]inbox.ThreadKey) {}
	}
	return h, nil
}

// Name names the service in logs.
func (h *Hosted) Name() string { return h.kind + " sessions " + h.agentID }

// Start polls the threads with open runs now and every poll_interval, until Stop.
func (h *Hosted) Start(ctx context.Context) error {
	if err := h.StartStop.Start(ctx, h.pollLoop); err != nil {
		return fmt.Errorf("%s: %w", h.Name(), err)
	}
	return nil
}

// Stop ends the polls and waits for them, or for ctx.
func (h *Hosted) Stop(ctx context.Context) error {
	if err := h.StartStop.Stop(ctx); err != nil {
		return fmt.Errorf("stop %s: %w", h.Name(), err)
	}
	return nil
}

func (h *Hosted) pollLoop(ctx context.Context) {
	loop := service.Loop[struct{}]{
		Base: service.Base{Logger: h.log, Now: h.now},
		Pass: func(ctx context.Context) (struct{}, bool, error) {
			ks, err := h.runs.LiveThreads(ctx, h.agentID)
			if err != nil {
				h.log.Warn("list the threads with open runs", "error", err.Error())
			}
			for _, k := range ks {
				h.Reconcile(ctx, k, false)
			}
			return struct{}{}, false, err
		},
		Interval: h.poll,
	}
	loop.Run(ctx)
}

// lock takes k's lock: a delivery and a read of one thread take turns. A context that
// holds it (a run opened under it delivers recovered signals synchronously) takes it
// again without waiting.
func (h *Hosted) lock(ctx context.Context, k inbox.ThreadKey) (context.Context, func(), error) {
	if held, _ := ctx.Value(heldLock{}).(inbox.ThreadKey); held == k {
		return ctx, func() {}, nil
	}
	h.mu.Lock()
	l, ok := h.locks[k]
	if !ok {
		l = make(chan struct{}, 1)
		h.locks[k] = l
	}
	h.mu.Unlock()
	select {
	case l <- struct{}{}:
		return context.WithValue(ctx, heldLock{}, k), func() { <-l }, nil
	case <-ctx.Done():
		return ctx, nil, ctx.Err()
	}
}

type heldLock struct{}

// Deliver posts d's signal to its thread's session as one message, creating the
// session on the thread's first signal. How the policy's decisions map onto a session
// (a message to an idle session starts a turn, one to a busy session steers it):
//   - a wake starts a turn;
//   - a delivery into the active thread (notifications, messages) steers the turn;
//   - a queued message waits until the session is idle (agent.ErrHoldUntilIdle) and
//     starts the next turn;
//   - anything for a session waiting on people (an action required) waits until idle,
//     so a message never lands in the middle of an approval;
//   - a persisted signal goes as a message too: a session takes no input without a turn.
func (h *Hosted) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	ctx, unlock, err := h.lock(ctx, d.Thread)
	if err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("deliver signal %s: %w", d.Signal.ID, err), Retry: true}
	}
	defer unlock()
	id, created, err := h.session(ctx, d.Thread)
	if err != nil {
		return agent.Result{}, err
	}
	if d.Behavior != agent.BehaviorWake && !created {
		snap, err := h.api.Read(ctx, id)
		if err != nil {
			return agent.Result{}, h.lost(ctx, d.Thread, id, err)
		}
		busy := snap.State == Busy
		if snap.State == Waiting || (busy && d.DeliverAs == inbox.DeliverAsQueued) {
			return h.hold(ctx, d)
		}
	}
	if d.Behavior == agent.BehaviorWake && d.RunID != "" {
		h.woken(d.Thread, d.RunID, d.ReplyTo)
	}
	res, err := h.api.Send(ctx, id, d)
	if err != nil {
		return res, h.lost(ctx, d.Thread, id, err)
	}
	return res, nil
}

// hold hands d back to wait until the thread is idle; a thread the gateway holds no run
// on is given one (the session runs), which its idle webhook closes.
func (h *Hosted) hold(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	if d.RunID == "" {
		if _, _, err := h.runs.Open(ctx, d.Thread, h.kind); err != nil {
			return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("open a run for the busy session: %w", err), Retry: true}
		}
	}
	return agent.Result{}, fmt.Errorf("signal %s: the session is busy or waits on people: %w", d.Signal.ID, agent.ErrHoldUntilIdle)
}

// lost forgets the thread's session when the runtime says it is gone (404), so the
// retry creates another; err is returned either way, retryable in that case.
func (h *Hosted) lost(ctx context.Context, k inbox.ThreadKey, id string, err error) error {
	if agent.DeliveryFailure(err).Status != http.StatusNotFound {
		return err
	}
	if ferr := h.sessions.ForgetTargetSession(ctx, k, id); ferr != nil {
		return errors.Join(err, ferr)
	}
	h.log.Warn("the session is gone; the next attempt creates another", "thread", k.String(), "session_id", id)
	return &agent.DeliveryError{Err: fmt.Errorf("session %s is gone: %w", id, err), Status: http.StatusNotFound, Retry: true}
}

// session is k's session, created (and remembered) when it has none. Creation is not
// idempotent on either API: a lost answer leaves an orphan session behind, and the row
// saved first wins between replicas.
func (h *Hosted) session(ctx context.Context, k inbox.ThreadKey) (id string, created bool, err error) {
	ts, ok, err := h.sessions.TargetSession(ctx, k)
	if err != nil {
		return "", false, &agent.DeliveryError{Err: err, Retry: true}
	}
	if ok {
		return ts.ID, false, nil
	}
	id, err = h.api.Create(ctx, k)
	if err != nil {
		return "", false, fmt.Errorf("create the session of %s: %w", k, err)
	}
	kept, saved, err := h.sessions.SaveTargetSession(ctx, store.TargetSession{Thread: k, Kind: h.kind, ID: id, CreatedAt: h.now()})
	if err != nil {
		return "", false, &agent.DeliveryError{Err: err, Retry: true}
	}
	if !saved {
		h.log.Warn("another replica created the thread's session first; this one is left unused", "thread", k.String(),
			"session_id", id, "kept_session_id", kept.ID)
	}
	h.log.Info("session created", "thread", k.String(), "session_id", kept.ID)
	return kept.ID, saved, nil
}

// woken records that gateway run runID was opened by a wake whose records answer to
// replyTo: the turn's last message goes there (reply: auto).
func (h *Hosted) woken(k inbox.ThreadKey, runID string, replyTo any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.woke[k].runID == runID {
		return
	}
	w := wokeRun{runID: runID}
	if to, ok := reply.Parse(replyTo); ok {
		w.to = &to
	}
	h.woke[k] = w
}

// Reconcile reads k's session and sets k's run to match: busy keeps (or opens) it,
// waiting asks its actions, idle closes it (answering the woken turn first), failed
// aborts it as crashed. hinted: a webhook said the session changed, so even a young
// run may close (a poll leaves runs younger than the grace open: their turn may not
// show yet).
func (h *Hosted) Reconcile(ctx context.Context, k inbox.ThreadKey, hinted bool) {
	ctx, unlock, err := h.lock(ctx, k)
	if err != nil {
		return
	}
	defer unlock()
	r := Reconciled{Thread: k}
	defer func() { h.TestSignals.Reconciled.Signal(r) }()
	ts, ok, err := h.sessions.TargetSession(ctx, k)
	if err != nil || !ok {
		if err != nil {
			h.log.Error("read the thread's session", "thread", k.String(), "error", err.Error())
		}
		return
	}
	snap, err := h.api.Read(ctx, ts.ID)
	if err != nil {
		h.log.Warn("read the session", "thread", k.String(), "session_id", ts.ID, "error", err.Error())
		return
	}
	r.State = snap.State
	live, err := h.runs.Live(ctx, k)
	if err != nil {
		h.log.Error("read the thread's run", "thread", k.String(), "error", err.Error())
		return
	}
	switch snap.State {
	case Busy, Waiting:
		live = h.keep(ctx, k, live)
		if snap.State == Waiting && live != nil {
			h.ask(ctx, k, live.ID, snap.Actions)
		}
		return
	case Failed:
		if snap.Ended {
			if err := h.sessions.ForgetTargetSession(ctx, k, ts.ID); err != nil {
				h.log.Error("forget the ended session", "thread", k.String(), "error", err.Error())
			}
		}
		if live != nil {
			r.Closed = h.end(ctx, k, live, agent.RunAborted, agent.CauseCrashed)
		}
		return
	}
	if live == nil || (!hinted && h.now().Sub(live.OpenedAt) < h.grace) {
		return
	}
	if !h.answer(ctx, k, ts.ID, live) {
		h.keep(ctx, k, live)
		return
	}
	r.Closed = h.end(ctx, k, live, agent.RunFinished, "")
}

// keep renews live, or opens a run for a turn the gateway did not start.
func (h *Hosted) keep(ctx context.Context, k inbox.ThreadKey, live *agent.Run) *agent.Run {
	if live == nil {
		run, _, err := h.runs.Open(ctx, k, h.kind)
		if err != nil {
			h.log.Error("open run", "thread", k.String(), "error", err.Error())
			return nil
		}
		return &run
	}
	if _, err := h.runs.Heartbeat(ctx, k, live.ID); err != nil {
		h.log.Warn("renew run", "thread", k.String(), "run_id", live.ID, "error", err.Error())
	}
	return live
}

// ask asks each answerable action as an approval (replays are harmless: the call's
// first approval stands).
func (h *Hosted) ask(ctx context.Context, k inbox.ThreadKey, runID string, actions []Action) {
	for _, a := range actions {
		switch {
		case a.Unanswerable != "":
			h.log.Warn("the session waits on an action no approval answers; answer it in the platform's console",
				"thread", k.String(), "action", a.Unanswerable)
		case h.approvals == nil:
			h.log.Warn("the session waits on an approval and approvals are off: it stays busy until answered in the platform",
				"thread", k.String(), "call_id", a.ID)
		default:
			h.approvals.Approval(ctx, h.origin, k, runID, a.ID, a.Tool, a.Args)
		}
	}
}

// end closes live and tells the dispatcher of an idle thread.
func (h *Hosted) end(ctx context.Context, k inbox.ThreadKey, live *agent.Run, status, cause string) bool {
	if h.approvals != nil {
		h.approvals.RunEnded(ctx, k, live.ID)
	}
	_, idle, err := h.runs.Close(ctx, k, live.ID, status, cause)
	if err != nil {
		h.log.Error("close run", "thread", k.String(), "run_id", live.ID, "error", err.Error())
		return false
	}
	h.mu.Lock()
	if h.woke[k].runID == live.ID {
		delete(h.woke, k) // answered: nothing more goes to where it came from
	}
	h.mu.Unlock()
	h.log.Debug("session idle; run closed", "thread", k.String(), "run_id", live.ID, "status", status)
	if idle {
		h.notify([]inbox.ThreadKey{k})
	}
	return true
}

// answer queues the session's last message as the reply of live, a run the gateway
// woke (reply: auto), and reports whether the run may close: only once the answer is
// in the outbox (or needs none).
func (h *Hosted) answer(ctx context.Context, k inbox.ThreadKey, id string, live *agent.Run) bool {
	if h.replies == nil || !h.replyAuto || live.Origin != agent.OriginWake {
		return true
	}
	text, err := h.api.LastMessage(ctx, id)
	if err != nil {
		if agent.DeliveryFailure(err).Retry {
			h.log.Warn("read the turn's answer; the run stays open until a later read", "thread", k.String(), "error", err.Error())
			return false
		}
		h.log.Warn("turn's answer not read; no reply", "thread", k.String(), "error", err.Error())
		return true
	}
	text = strings.TrimSpace(text)
	if text == "" || len(text) > reply.MaxTextBytes {
		h.log.Debug("no reply: the turn ended without an answer, or one over the reply size limit", "thread", k.String())
		return true
	}
	h.mu.Lock()
	woke := h.woke[k]
	h.mu.Unlock()
	req := reply.Request{ID: reply.RunAnswerID(live.ID), Text: text}
	if woke.runID == live.ID {
		req.ReplyTo = woke.to
	}
	return reply.QueueAnswer(ctx, h.replies, h.log, k, req, "run_id", live.ID)
}
