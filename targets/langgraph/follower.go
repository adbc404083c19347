package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// Presence is what the follower changes: *agent.Runs.
type Presence interface {
	// LiveThreads lists the agent's threads with a live run: read on every poll.
	LiveThreads(ctx context.Context, agentID string) ([]inbox.ThreadKey, error)
	// Live is the thread's open run, or nil.
	Live(ctx context.Context, k inbox.ThreadKey) (*agent.Run, error)
	Open(ctx context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error)
	Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (agent.Run, error)
	// Close ends a run; an aborted one's in-flight signals are recovered with cause.
	Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error)
}

// QuestionHook is told of the interrupts a thread waits on (approval.Relay).
type QuestionHook interface {
	// Question: the thread waits on an interrupt() (replays harmless: the call's first
	// record stands).
	Question(ctx context.Context, origin string, k inbox.ThreadKey, runID, callID, tool string, payload json.RawMessage)
	// ToolAnswered: the interrupt no longer waits (answered elsewhere).
	ToolAnswered(ctx context.Context, k inbox.ThreadKey, callID string)
	// RunEnded: the gateway run ended; its questions still pending expire.
	RunEnded(ctx context.Context, k inbox.ThreadKey, runID string)
}

// Replier queues a reply (reply.Service).
type Replier interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
}

// InterruptTool is the tool name an interrupt's question shows.
const InterruptTool = "interrupt"

// Pacing of the follower.
const (
	// heartbeatEvery paces lease renewals of a thread the server runs.
	heartbeatEvery = 15 * time.Second
	// checkers is how many threads are read at once.
	checkers = 8
)

// Follower keeps one langgraph agent's threads' presence in step with the server: a
// thread is active while the server runs it (busy), or waits on an interrupt()
// (interrupted: a question for people); it is idle once the server is idle (or in error:
// the run crashed) and no run the gateway started is pending. Each thread is read
// (POST /threads/search) when a run's webhook says it ended, and every poll_interval
// while the gateway holds a run open on it; what a read finds opens (a run the gateway
// did not start), renews or closes the gateway run, asks the interrupts as questions and
// answers a woken run (reply: auto) before its end is recorded.
type Follower struct {
	// TestSignals are for tests; they do nothing unless a test initialises them.
	TestSignals FollowerSignals

	id        string
	cfg       server
	err       error
	api       *api
	runs      Presence
	notify    func([]inbox.ThreadKey)
	log       *slog.Logger
	now       func() time.Time
	questions QuestionHook
	replies   Replier
	// grace: a poll leaves a gateway run this young open when no run the gateway
	// started for it is known to have ended (its wake may still be on its way).
	grace time.Duration

	service.StartStop
	mu      sync.Mutex
	threads map[inbox.ThreadKey]*tracked
	due     map[inbox.ThreadKey]bool // threads waiting for a checker
	kick    chan struct{}
	graph   string // the assistant's graph, once read
}

// tracked is what this process knows of one thread. Guarded by Follower.mu, except
// what the thread's lock guards.
type tracked struct {
	lock chan struct{} // held by the thread's delivery or read
	// Guarded by lock.
	ensured bool     // the LangGraph thread exists (this process created or saw it)
	latest  lgRun    // the newest run this process started on the thread
	asked   []string // the interrupts asked as questions, of the open gateway run
	beatAt  time.Time
	// Guarded by Follower.mu.
	hint     *runEnd // what a webhook said since the last read
	woke     wokeRun
	lastUsed time.Time
}

// lgRun is a LangGraph run the gateway started.
type lgRun struct {
	id         string
	gatewayRun string // the gateway run it belongs to
	ended      bool
}

// runEnd is what a webhook said: run of gateway run gatewayRun ended with status.
type runEnd struct {
	run, gatewayRun, status string
}

// wokeRun is the gateway run a wake opened and where its answer goes.
type wokeRun struct {
	runID string
	to    *reply.To
}

// FollowerSignals are the points of a follower's work tests wait on.
type FollowerSignals struct {
	// Checked: a thread was read; Status is the server's thread status ("" when the
	// read failed) and Closed whether the gateway run was closed.
	Checked service.Signal[Check]
	// Webhook: a run's webhook was taken.
	Webhook service.Signal[inbox.ThreadKey]
}

// Check is one read of a thread as FollowerSignals.Checked reports it.
type Check struct {
	Thread inbox.ThreadKey
	Status string
	Busy   bool
	Closed bool
}

// FollowerOption configures a Follower.
type FollowerOption func(*Follower)

// WithQuestions hands the interrupts threads wait on to h.
func WithQuestions(h QuestionHook) FollowerOption { return func(f *Follower) { f.questions = h } }

// WithReplies makes a follower of an agent with target.reply: auto queue the final AI
// message of each run the gateway woke as a reply to where its wake came from, once per
// run, before the run's end is recorded.
func WithReplies(r Replier) FollowerOption { return func(f *Follower) { f.replies = r } }

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) FollowerOption { return func(f *Follower) { f.api.client = c } }

// WithGrace sets how young a gateway run a poll leaves open while nothing says its
// LangGraph run ended (default: twice the target's timeout plus the poll interval).
func WithGrace(d time.Duration) FollowerOption { return func(f *Follower) { f.grace = d } }

// NewFollower builds the follower of one langgraph agent. notify receives threads that
// turned idle (the dispatcher's Notify).
func NewFollower(cfg agent.Config, runs Presence, notify func([]inbox.ThreadKey), base service.Base, opts ...FollowerOption) *Follower {
	srv, err := serverOf(cfg)
	cfg = cfg.WithDefaults()
	base = base.Component("langgraph_follower", "agent", cfg.ID)
	now := base.Now
	if now == nil {
		now = time.Now
	}
	f := &Follower{id: cfg.ID, cfg: srv, err: err, runs: runs, notify: notify, log: base.Logger, now: now,
		api: &api{srv: srv, client: &http.Client{}, now: now}, grace: 2*srv.Timeout + srv.PollInterval,
		threads: map[inbox.ThreadKey]*tracked{}, due: map[inbox.ThreadKey]bool{}, kick: make(chan struct{}, 1)}
	if f.log == nil {
		f.log = slog.Default()
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Name names the service in logs.
func (f *Follower) Name() string { return "langgraph follower " + f.id }

// Start reads the threads with open runs at once (a restart resumes them) and then every
// poll_interval, until Stop.
func (f *Follower) Start(ctx context.Context) error {
	if f.err != nil {
		return fmt.Errorf("langgraph follower: %w", f.err)
	}
	loops := []func(context.Context){f.pollLoop}
	for range checkers {
		loops = append(loops, f.checker)
	}
	if err := f.StartStop.Start(ctx, loops...); err != nil {
		return fmt.Errorf("langgraph follower: %w", err)
	}
	return nil
}

// Stop ends the polls and reads and waits for them, or for ctx.
func (f *Follower) Stop(ctx context.Context) error {
	if err := f.StartStop.Stop(ctx); err != nil {
		return fmt.Errorf("stop langgraph follower: %w", err)
	}
	return nil
}

// pollLoop asks for a read of every thread with an open run, now and every poll
// interval, and forgets threads nothing happened on for a while.
func (f *Follower) pollLoop(ctx context.Context) {
	loop := service.Loop[struct{}]{
		Base: service.Base{Logger: f.log, Now: f.now},
		Pass: func(ctx context.Context) (struct{}, bool, error) {
			ks, err := f.runs.LiveThreads(ctx, f.id)
			if err != nil {
				f.log.Warn("list the threads with open runs", "error", err.Error())
			}
			f.forget()
			f.check(ks...)
			return struct{}{}, false, err
		},
		Interval: f.cfg.PollInterval,
	}
	loop.Run(ctx)
}

// forget drops what is known of threads untouched for a few leases (a later delivery
// asks the server again).
func (f *Follower) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.now().Add(-3 * f.cfg.Lease)
	for k, tr := range f.threads {
		if tr.lastUsed.Before(old) && !f.due[k] && len(tr.lock) == 0 {
			delete(f.threads, k)
		}
	}
}

// check asks the checkers to read ks.
func (f *Follower) check(ks ...inbox.ThreadKey) {
	if len(ks) == 0 {
		return
	}
	f.mu.Lock()
	for _, k := range ks {
		f.due[k] = true
	}
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// checker reads the threads asked for, one at a time, until ctx ends.
func (f *Follower) checker(ctx context.Context) {
	for {
		f.mu.Lock()
		var k inbox.ThreadKey
		found := false
		for k = range f.due {
			found = true
			delete(f.due, k)
			break
		}
		more := len(f.due) > 0
		f.mu.Unlock()
		if found {
			if more {
				select { // another checker may take the rest
				case f.kick <- struct{}{}:
				default:
				}
			}
			f.read(ctx, k)
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
	}
}

// entry is k's tracked state, made on first use.
func (f *Follower) entry(k inbox.ThreadKey) *tracked {
	f.mu.Lock()
	defer f.mu.Unlock()
	tr, ok := f.threads[k]
	if !ok {
		tr = &tracked{lock: make(chan struct{}, 1)}
		f.threads[k] = tr
	}
	tr.lastUsed = f.now()
	return tr
}

// lock takes k's lock: a delivery and a read of one thread take turns, so a read never
// closes the run of a wake whose LangGraph run is being started. It is held for the
// returned context's holder: opening a run under it (which may deliver the previous
// run's recovered signals to the thread, synchronously) takes it again without waiting.
func (f *Follower) lock(ctx context.Context, k inbox.ThreadKey) (context.Context, *tracked, func(), error) {
	tr := f.entry(k)
	if held, _ := ctx.Value(heldLock{}).(inbox.ThreadKey); held == k {
		return ctx, tr, func() {}, nil
	}
	select {
	case tr.lock <- struct{}{}:
		return context.WithValue(ctx, heldLock{}, k), tr, func() { <-tr.lock }, nil
	case <-ctx.Done():
		return ctx, nil, nil, ctx.Err()
	}
}

// heldLock marks a context whose holder has the thread's lock.
type heldLock struct{}

// webhookTaken records what a run's webhook said and asks for a read of its thread.
func (f *Follower) webhookTaken(k inbox.ThreadKey, e runEnd) {
	tr := f.entry(k)
	f.mu.Lock()
	tr.hint = &e
	f.mu.Unlock()
	f.check(k)
	f.TestSignals.Webhook.Signal(k)
}

// woken records that gateway run runID was opened by a wake whose records answer to
// replyTo: the run's answer goes there.
func (f *Follower) woken(tr *tracked, runID string, replyTo any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tr.woke.runID == runID {
		return // a retry of the wake, or a later signal of the run
	}
	tr.woke = wokeRun{runID: runID}
	if to, ok := reply.Parse(replyTo); ok {
		tr.woke.to = &to
	}
}

// read reads k from the server and sets the gateway's presence to match.
func (f *Follower) read(ctx context.Context, k inbox.ThreadKey) {
	ctx, tr, unlock, err := f.lock(ctx, k)
	if err != nil {
		return
	}
	defer unlock()
	f.mu.Lock()
	hint := tr.hint
	tr.hint = nil
	f.mu.Unlock()
	c := Check{Thread: k}
	defer func() { f.TestSignals.Checked.Signal(c) }()
	if hint != nil && hint.run == tr.latest.id {
		tr.latest.ended = true
	}
	t, found, err := f.api.status(ctx, k)
	if err != nil {
		// Nothing renews the run meanwhile: a server that stays unreachable lets its
		// lease lapse (the run timed out).
		f.log.Warn("read the LangGraph thread", "thread", k.String(), "error", err.Error())
		return
	}
	if !found {
		// The server does not have the thread (an in-memory server restarted): it runs
		// nothing, and the next delivery creates it again.
		tr.ensured, t.Status = false, StatusIdle
	}
	c.Status = t.Status
	live, err := f.runs.Live(ctx, k)
	if err != nil {
		f.log.Error("read the thread's run", "thread", k.String(), "error", err.Error())
		return
	}
	busy, err := f.running(ctx, k, tr, t)
	if err != nil {
		f.log.Warn("read the LangGraph thread's runs", "thread", k.String(), "error", err.Error())
		return
	}
	c.Busy = busy
	if busy {
		live = f.keep(ctx, k, tr, live)
		if live != nil && t.Status == StatusInterrupted {
			f.ask(ctx, k, tr, live.ID, t.pending())
		} else {
			f.asked(ctx, k, tr, nil)
		}
		return
	}
	f.asked(ctx, k, tr, nil)
	if live == nil || !f.mayClose(tr, live, hint) {
		return
	}
	status, cause := agent.RunFinished, ""
	if t.Status == StatusError {
		status, cause = agent.RunAborted, agent.CauseCrashed
	} else if !f.answer(ctx, k, tr, live) {
		return // the outbox or the server failed: the run stays open for a later read
	}
	c.Closed = f.end(ctx, k, tr, live, status, cause)
}

// running reports whether the server runs k (busy) or waits on it (interrupted), or a
// run the gateway started there has not ended: the server shows a thread idle, or in
// error, for a moment when one run supersedes another.
func (f *Follower) running(ctx context.Context, k inbox.ThreadKey, tr *tracked, t thread) (bool, error) {
	if t.Status == StatusBusy || t.Status == StatusInterrupted {
		return true, nil
	}
	if tr.latest.id != "" && !tr.latest.ended {
		r, err := f.api.getRun(ctx, k, tr.latest.id)
		if agent.DeliveryFailure(err).Status == http.StatusNotFound {
			tr.latest.ended = true
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !runEnded(r.Status) {
			return true, nil
		}
		tr.latest.ended = true
		return false, nil
	}
	if t.Status == StatusError {
		active, err := f.api.activeRuns(ctx, k)
		return len(active) > 0, err
	}
	return false, nil
}

// keep keeps k active while the server runs it: the open run is renewed, or one is
// opened for a run the gateway did not start (adopted). It returns the open run.
func (f *Follower) keep(ctx context.Context, k inbox.ThreadKey, tr *tracked, live *agent.Run) *agent.Run {
	if live == nil {
		run, _, err := f.runs.Open(ctx, k, Kind)
		if err != nil {
			f.log.Error("open run", "thread", k.String(), "error", err.Error())
			return nil
		}
		tr.beatAt = f.now()
		return &run
	}
	if f.now().Sub(tr.beatAt) < heartbeatEvery {
		return live
	}
	tr.beatAt = f.now()
	if _, err := f.runs.Heartbeat(ctx, k, live.ID); err != nil {
		f.log.Warn("renew run", "thread", k.String(), "run_id", live.ID, "error", err.Error())
	}
	return live
}

// mayClose reports whether the read may close live: the webhook of a LangGraph run
// started for it came, or this process saw the newest run it started for it end, or it
// is old enough that its wake has had its chance to start one.
func (f *Follower) mayClose(tr *tracked, live *agent.Run, hint *runEnd) bool {
	switch {
	case hint != nil && hint.gatewayRun == live.ID:
		return true
	case tr.latest.id != "" && tr.latest.gatewayRun == live.ID:
		return tr.latest.ended
	}
	return f.now().Sub(live.OpenedAt) >= f.grace
}

// end closes the gateway run and tells the dispatcher of an idle thread.
func (f *Follower) end(ctx context.Context, k inbox.ThreadKey, tr *tracked, live *agent.Run, status, cause string) bool {
	if f.questions != nil {
		f.questions.RunEnded(ctx, k, live.ID)
	}
	tr.asked = nil
	_, idle, err := f.runs.Close(ctx, k, live.ID, status, cause)
	if err != nil {
		f.log.Error("close run", "thread", k.String(), "run_id", live.ID, "error", err.Error())
		return false
	}
	f.log.Debug("LangGraph thread idle; run closed", "thread", k.String(), "run_id", live.ID, "status", status)
	if idle {
		f.notify([]inbox.ThreadKey{k})
	}
	return true
}

// ask asks the interrupts k waits on as questions (once each: the approvals keep the
// first record of an interrupt id), and expires those no longer waited on.
func (f *Follower) ask(ctx context.Context, k inbox.ThreadKey, tr *tracked, gatewayRun string, pending []pendingInterrupt) {
	var ids []string
	for _, p := range pending {
		ids = append(ids, p.ID)
		switch {
		case containsID(tr.asked, p.ID):
		case f.questions == nil:
			f.log.Warn("the thread waits on an interrupt and approvals are off: it stays busy until answered in LangGraph",
				"thread", k.String(), "interrupt_id", p.ID)
		default:
			f.questions.Question(ctx, approval.OriginLangGraph, k, gatewayRun, p.ID, InterruptTool, p.Value)
		}
	}
	f.asked(ctx, k, tr, ids)
}

// asked sets the interrupts asked to ids, expiring the questions of those left out (no
// longer waited on: answered elsewhere, or the graph moved on).
func (f *Follower) asked(ctx context.Context, k inbox.ThreadKey, tr *tracked, ids []string) {
	for _, id := range tr.asked {
		if !containsID(ids, id) && f.questions != nil {
			f.questions.ToolAnswered(ctx, k, id)
		}
	}
	tr.asked = ids
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// started records a LangGraph run started for gateway run gatewayRun.
func (f *Follower) started(tr *tracked, r run, gatewayRun string) {
	if r.RunID == "" {
		return
	}
	tr.latest = lgRun{id: r.RunID, gatewayRun: gatewayRun}
}

// graphID is the assistant's graph (read once; "" when it cannot be read).
func (f *Follower) graphID(ctx context.Context) string {
	f.mu.Lock()
	g := f.graph
	f.mu.Unlock()
	if g != "" {
		return g
	}
	g, err := f.api.graphID(ctx)
	if err != nil {
		f.log.Warn("read the assistant's graph", "assistant_id", f.cfg.AssistantID, "error", err.Error())
		return ""
	}
	f.mu.Lock()
	f.graph = g
	f.mu.Unlock()
	return g
}
