package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// Presence is what the tasks change: *agent.Runs. A task belongs to the gateway run the
// wake that opened it opened; the task's end closes that run.
type Presence interface {
	// LiveThreads lists the agent's threads with a live run: their tasks are followed
	// again on Start.
	LiveThreads(ctx context.Context, agentID string) ([]inbox.ThreadKey, error)
	// Live is the thread's open run, or nil.
	Live(ctx context.Context, k inbox.ThreadKey) (*agent.Run, error)
	Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (agent.Run, error)
	// Close ends a run; an aborted one's in-flight signals are recovered with cause.
	Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error)
}

// Questions is told of tasks that wait for people (approval.Relay): asked once per
// input-required or auth-required state whatever replicas see it, expired once the
// task moves on or ends.
type Questions interface {
	Question(ctx context.Context, origin string, k inbox.ThreadKey, runID, toolCallID, tool string, payload json.RawMessage)
	ToolAnswered(ctx context.Context, k inbox.ThreadKey, toolCallID string)
	RunEnded(ctx context.Context, k inbox.ThreadKey, runID string)
}

// Replier queues a reply (reply.Service): target.reply: auto hands it each completed
// woken task's answer.
type Replier interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
}

// Pacing of the tasks' bookkeeping.
const (
	// heartbeatEvery paces lease renewals of a run whose task works.
	heartbeatEvery = 15 * time.Second
	// pollers bounds the tasks/get calls in flight at once.
	pollers = 8
	// maxPushBody bounds a push notification's body (a v0.3 notification is the whole
	// task, history included).
	maxPushBody = 4 << 20
)

// Tasks follows the tasks the gateway opened on one A2A agent and makes them the
// threads' presence: a task's thread is busy (its gateway run open) until the task
// ends: completed or rejected close the run as finished; failed, canceled, or unknown to
// the agent (it restarted) close it as aborted, so its signals are delivered again. A
// task in input-required or auth-required asks people (Questions) and stays busy.
// State comes from the answers to the gateway's own sends, from the push notifications
// each task registers (Mount serves them; each carries the task's token, compared in
// constant time), and from tasks/get every poll_interval, the fallback of a lost push.
// Any replica may apply what it hears: the store keeps one run per thread and closes it
// once, the outbox takes a reply id once, the approvals store a question once.
type Tasks struct {
	// TestSignals are for tests; they do nothing unless a test initialises them.
	TestSignals TaskSignals

	cfg       settings
	conn      *conn
	runs      Presence
	notify    func([]inbox.ThreadKey)
	states    states
	questions Questions
	replies   Replier
	log       *slog.Logger
	now       func() time.Time
	kick      *service.Kick
	err       error // why the config cannot be followed: Start answers it

	service.StartStop
	mu      sync.Mutex
	tracked map[inbox.ThreadKey]*tracked
}

// tracked is one thread whose task is followed here.
type tracked struct {
	mu        sync.Mutex // held while a state of the task is applied
	rec       taskRecord
	contextID string
	state     string // last seen
	// stateAt is the status time of the state last applied: a snapshot whose status is
	// older (a push or a poll answer overtaken by a later one) is stale.
	stateAt time.Time
	// asked is the transition a question was asked for, "" when none is open.
	asked    string
	beatAt   time.Time
	nextPoll time.Time // guarded by Tasks.mu
	ended    bool
}

// TaskSignals are the points of the tasks' work tests wait on.
type TaskSignals struct {
	// State: a task was seen in a new state (from an answer, a push or a poll).
	State service.Signal[TaskState]
	// Pushed: a push notification was answered with this HTTP status.
	Pushed service.Signal[int]
	// Polled: a poll pass read this many tasks.
	Polled service.Signal[int]
}

// TaskState is a state a thread's task was seen in.
type TaskState struct {
	Thread inbox.ThreadKey
	TaskID string
	State  string
	From   string // answer, push, poll
}

// TasksOption configures Tasks.
type TasksOption func(*Tasks)

// WithQuestions asks people through q when a task waits for input.
func WithQuestions(q Questions) TasksOption { return func(t *Tasks) { t.questions = q } }

// WithReplies makes the tasks of an agent with target.reply: auto queue each completed
// woken task's answer as a reply to where its wake came from, once, before the task's
// end is recorded.
func WithReplies(r Replier) TasksOption { return func(t *Tasks) { t.replies = r } }

// NewTasks builds the task follower of one a2a agent. notify receives threads that
// turned idle (the dispatcher's Notify); st keeps each context's task record.
func NewTasks(cfg agent.Config, runs Presence, notify func([]inbox.ThreadKey), st StateStore, hc *http.Client, base service.Base, opts ...TasksOption) *Tasks {
	s, err := settingsOf(cfg)
	base = base.Component("a2a_tasks", "agent", cfg.ID)
	t := &Tasks{cfg: s, conn: newConn(s, hc, base.Now), runs: runs, notify: notify, states: newStates(st, cfg.ID),
		log: base.Logger, now: base.Now, kick: service.NewKick(), err: err, tracked: map[inbox.ThreadKey]*tracked{}}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Name names the service in logs.
func (t *Tasks) Name() string { return "a2a tasks " + t.cfg.Agent }

// Start follows again the tasks of the agent's live runs (opened before a restart, or by
// another replica), then polls until Stop.
func (t *Tasks) Start(ctx context.Context) error {
	if t.err != nil {
		return fmt.Errorf("a2a tasks: %w", t.err)
	}
	loop := service.Loop[int]{
		Base:      service.Base{Logger: t.log, Now: t.now},
		Pass:      t.pollPass,
		Failed:    "poll a2a tasks",
		Signal:    &t.TestSignals.Polled,
		NextDue:   t.nextPoll,
		Kick:      t.kick.C(),
		Interval:  t.cfg.PollInterval,
		ErrorWait: t.cfg.PollInterval,
	}
	if err := t.StartStop.Start(ctx, loop.Run); err != nil {
		return fmt.Errorf("a2a tasks: %w", err)
	}
	ks, err := t.runs.LiveThreads(ctx, t.cfg.Agent)
	if err != nil {
		t.log.Warn("resume following the tasks of live threads", "error", err.Error())
	}
	for _, k := range ks {
		t.resume(ctx, k)
	}
	t.kick.Kick()
	return nil
}

// Stop ends polling and waits for it, or for ctx.
func (t *Tasks) Stop(ctx context.Context) error {
	if err := t.StartStop.Stop(ctx); err != nil {
		return fmt.Errorf("stop a2a tasks: %w", err)
	}
	return nil
}

// resume follows the task of k's live run, as its record names it. A send whose answer
// was never read (the gateway stopped during it) is looked for among the context's tasks
// (A2A v1.0); not found, the run ends by its lease and its signals are delivered again.
func (t *Tasks) resume(ctx context.Context, k inbox.ThreadKey) {
	cid := ContextID(k)
	rec, ok, err := t.states.load(ctx, cid)
	if err != nil || !ok {
		if err != nil {
			t.log.Warn("read the task record of a live thread", "thread", k.String(), "error", err.Error())
		}
		return
	}
	run, err := t.runs.Live(ctx, k)
	if err != nil || run == nil || run.ID != rec.RunID {
		return
	}
	if rec.TaskID == "" && rec.Sending != "" {
		card, err := t.conn.card(ctx)
		if err != nil {
			return
		}
		found, err := t.conn.findSent(ctx, card, cid, rec.Sending)
		if err != nil || found == nil {
			return
		}
		rec.TaskID = found.ID
		rec.Sending = ""
		if err := t.states.save(ctx, cid, rec); err != nil {
			t.log.Warn("record a found task", "thread", k.String(), "error", err.Error())
		}
	}
	if rec.TaskID == "" {
		return
	}
	t.follow(k, rec)
	t.log.Info("following a task again", "thread", k.String(), "task_id", rec.TaskID)
}

// follow starts following rec's task on k (replacing an older task of the thread), due
// for a poll at the next interval.
func (t *Tasks) follow(k inbox.ThreadKey, rec taskRecord) *tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr, ok := t.tracked[k]
	if ok && tr.rec.TaskID == rec.TaskID && tr.rec.RunID == rec.RunID {
		if tr.rec.Sending != "" && rec.Sending == "" {
			tr.rec = rec
		}
		return tr
	}
	tr = &tracked{rec: rec, contextID: ContextID(k), nextPoll: t.now().Add(t.cfg.PollInterval), beatAt: t.now()}
	t.tracked[k] = tr
	t.kick.Kick()
	return tr
}

// current is k's followed task, or nil.
func (t *Tasks) current(k inbox.ThreadKey) *tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tracked[k]
}

func (t *Tasks) drop(k inbox.ThreadKey, tr *tracked) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tracked[k] == tr {
		delete(t.tracked, k)
	}
}

// nextPoll is when the earliest followed task is due a poll.
func (t *Tasks) nextPoll(context.Context) (*time.Time, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var next *time.Time
	for _, tr := range t.tracked {
		if next == nil || tr.nextPoll.Before(*next) {
			at := tr.nextPoll
			next = &at
		}
	}
	return next, nil
}

// pollPass reads every followed task that is due (tasks/get), pollers at a time.
func (t *Tasks) pollPass(ctx context.Context) (int, bool, error) {
	now := t.now()
	type due struct {
		k  inbox.ThreadKey
		tr *tracked
	}
	var list []due
	t.mu.Lock()
	for k, tr := range t.tracked {
		if !tr.nextPoll.After(now) {
			tr.nextPoll = now.Add(t.cfg.PollInterval)
			list = append(list, due{k, tr})
		}
	}
	t.mu.Unlock()
	if len(list) == 0 {
		return 0, false, nil
	}
	card, err := t.conn.card(ctx)
	if err != nil {
		return 0, false, err
	}
	sem := make(chan struct{}, pollers)
	var wg sync.WaitGroup
	for _, d := range list {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.poll(ctx, card, d.k, d.tr)
		}()
	}
	wg.Wait()
	return len(list), false, nil
}

// poll reads k's task and applies its state; a task the agent no longer knows ended.
func (t *Tasks) poll(ctx context.Context, card Card, k inbox.ThreadKey, tr *tracked) {
	tr.mu.Lock()
	rec := tr.rec
	tr.mu.Unlock()
	got, err := t.conn.get(ctx, card, rec.TaskID)
	switch {
	case rpcCode(err) == codeTaskNotFound:
		t.observe(ctx, k, rec, snapshot{TaskID: rec.TaskID, ContextID: tr.contextID, State: stateGone}, "poll")
	case err != nil:
		if ctx.Err() == nil {
			t.log.Warn("poll task", "thread", k.String(), "task_id", rec.TaskID, "error", err.Error())
		}
		// The agent cannot be asked: the thread keeps its presence (the run's lease is
		// renewed) until it answers, as when a stream is lost.
		t.beat(ctx, k, tr)
	default:
		t.observe(ctx, k, rec, got.snapshot(), "poll")
	}
}

// observe applies a state of rec's task seen in s. A snapshot of another task (an
// earlier one of the context, a late notification) changes nothing.
func (t *Tasks) observe(ctx context.Context, k inbox.ThreadKey, rec taskRecord, s snapshot, from string) {
	tr := t.follow(k, rec)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.ended || s.TaskID != tr.rec.TaskID {
		return
	}
	if s.State == "" { // an artifact: the task works on
		t.beatLocked(ctx, k, tr)
		return
	}
	if !s.At.IsZero() && s.At.Before(tr.stateAt) {
		// Overtaken: a push or a poll answer that left before a later state arrived. Taken
		// as news, a stale "working" after "input-required" would end the open question
		// as answered elsewhere.
		t.beatLocked(ctx, k, tr)
		return
	}
	if s.At.After(tr.stateAt) {
		tr.stateAt = s.At
	}
	if s.State != tr.state {
		tr.state = s.State
		// Told once what the state makes happen has happened.
		defer t.TestSignals.State.Signal(TaskState{Thread: k, TaskID: s.TaskID, State: s.State, From: from})
		o := observed{TaskID: s.TaskID, State: s.State, At: t.now().UTC()}
		if asks(s.State) {
			o.Text = s.Text
		}
		if err := t.states.saveObserved(ctx, tr.contextID, o); err != nil {
			t.log.Warn("record the task's state", "thread", k.String(), "error", err.Error())
		}
	}
	switch {
	case terminal(s.State):
		t.end(ctx, k, tr, s)
	case asks(s.State):
		t.beatLocked(ctx, k, tr)
		if tr.asked != s.transition() {
			t.ask(ctx, k, tr, s)
		}
	default:
		t.beatLocked(ctx, k, tr)
		if call, ok := questionCall(tr.rec.TaskID, tr.asked); ok && tr.asked != "" && t.questions != nil {
			// Answered elsewhere (or by the gateway's own answer): the question is over.
			t.questions.ToolAnswered(ctx, k, call)
		}
		tr.asked = ""
	}
}

// beat renews k's run while its task works (at most every heartbeatEvery).
func (t *Tasks) beat(ctx context.Context, k inbox.ThreadKey, tr *tracked) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t.beatLocked(ctx, k, tr)
}

func (t *Tasks) beatLocked(ctx context.Context, k inbox.ThreadKey, tr *tracked) {
	if tr.ended || t.now().Sub(tr.beatAt) < heartbeatEvery {
		return
	}
	tr.beatAt = t.now()
	if _, err := t.runs.Heartbeat(ctx, k, tr.rec.RunID); err != nil {
		if errors.Is(err, agent.ErrRunClosed) || errors.Is(err, agent.ErrRunNotFound) {
			// The run ended without the task (its lease lapsed, it was aborted): the task
			// is no longer the thread's presence.
			tr.ended = true
			t.drop(k, tr)
			return
		}
		t.log.Warn("renew the run of a working task", "thread", k.String(), "run_id", tr.rec.RunID, "error", err.Error())
	}
}

// closing is how a task's end closes its run: completed and rejected tasks finished
// (the agent dealt with the signals, or refused them); a failed, canceled or lost task's
// run is aborted, so its signals go again into the thread's next run.
func closing(state string) (status, cause string) {
	switch state {
	case StateCompleted, StateRejected:
		return agent.RunFinished, ""
	case StateCanceled:
		return agent.RunAborted, agent.CauseAborted
	}
	return agent.RunAborted, agent.CauseCrashed
}

// end closes the run of a task that ended, once its answer is in the outbox (or needs
// none). A failure of the gateway (the store) leaves the task followed: the next poll
// tries again.
func (t *Tasks) end(ctx context.Context, k inbox.ThreadKey, tr *tracked, s snapshot) {
	if s.State == StateCompleted && t.answers(tr) && !t.answer(ctx, k, tr, s) {
		return
	}
	if t.questions != nil {
		t.questions.RunEnded(ctx, k, tr.rec.TaskID)
	}
	status, cause := closing(s.State)
	_, idle, err := t.runs.Close(ctx, k, tr.rec.RunID, status, cause)
	if err != nil {
		t.log.Error("close the run of an ended task", "thread", k.String(), "run_id", tr.rec.RunID, "error", err.Error())
		return
	}
	tr.ended = true
	t.drop(k, tr)
	lvl := slog.LevelInfo
	if status == agent.RunAborted {
		lvl = slog.LevelWarn
	}
	t.log.Log(ctx, lvl, "task ended", "thread", k.String(), "task_id", tr.rec.TaskID, "state", s.State, "run_id", tr.rec.RunID)
	if idle {
		t.notify([]inbox.ThreadKey{k})
	}
}

// answers reports whether tr's task is the gateway's to answer: the agent answers by
// itself and the gateway's wake opened the run.
func (t *Tasks) answers(tr *tracked) bool {
	return t.replies != nil && t.cfg.Reply == agent.ReplyAuto && tr.rec.Woken
}

// AutoReplyID is the reply id of task taskID's answer: whoever sees the task complete
// (the answer, a push, a poll; any replica) queues the same reply, which the outbox takes
// once.
func AutoReplyID(taskID string) string {
	id := "a2a-task-" + taskID
	if !reply.ValidID(id) {
		id = "a2a-task-" + shortHash(taskID)
	}
	return id
}

// answer queues the completed task's answer and reports whether its end may be
// recorded: false only while a failure of the gateway keeps the outbox from taking it.
func (t *Tasks) answer(ctx context.Context, k inbox.ThreadKey, tr *tracked, s snapshot) bool {
	text := s.answer()
	if text == "" && !s.Complete {
		// A notification with no message: the task itself holds the answer (artifacts).
		card, err := t.conn.card(ctx)
		if err == nil {
			var got task
			if got, err = t.conn.get(ctx, card, tr.rec.TaskID); err == nil {
				text = got.snapshot().answer()
			}
		}
		if err != nil {
			t.log.Warn("read the completed task's answer; trying again at the next poll", "thread", k.String(), "task_id", tr.rec.TaskID, "error", err.Error())
			return false
		}
	}
	if text == "" {
		t.log.Debug("task completed without text; no reply", "thread", k.String(), "task_id", tr.rec.TaskID)
		return true
	}
	if len(text) > reply.MaxTextBytes {
		t.log.Warn("task's answer not sent: over the reply size limit", "thread", k.String(), "task_id", tr.rec.TaskID, "limit_bytes", reply.MaxTextBytes)
		return true
	}
	req := reply.Request{ID: AutoReplyID(tr.rec.TaskID), Text: text}
	if to, ok := reply.Parse(tr.rec.ReplyTo); ok {
		req.ReplyTo = &to
	}
	return reply.QueueAnswer(ctx, t.replies, t.log, k, req, "task_id", tr.rec.TaskID)
}

// RuntimeRun is what the console shows of k's context: its task, the task's last seen
// state and since when, and while it asks, the question. The context's status is the
// task's in LangGraph's words: busy while it works, interrupted while it waits on
// people, idle once it ended.
func (t *Tasks) RuntimeRun(ctx context.Context, k inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	if k.Agent != t.cfg.Agent {
		return agent.RuntimeRun{}, false, nil
	}
	cid := ContextID(k)
	rec, ok, err := t.states.load(ctx, cid)
	if err != nil || !ok {
		return agent.RuntimeRun{}, false, err
	}
	out := agent.RuntimeRun{Kind: Kind, Thread: cid, Status: "busy", Term: "task", Run: rec.TaskID, RunStatus: "sending",
		Since: rec.OpenedAt}
	o, ok, err := t.states.loadObserved(ctx, cid)
	if err != nil {
		return agent.RuntimeRun{}, false, err
	}
	switch {
	case ok && o.TaskID == rec.TaskID && rec.TaskID != "":
		out.RunStatus, out.Since = o.State, o.At
	case rec.TaskID != "":
		out.RunStatus = StateSubmitted
	}
	switch {
	case terminal(out.RunStatus):
		out.Status = "idle"
	case out.RunStatus == StateInputRequired || out.RunStatus == StateAuthRequired:
		out.Status = "interrupted"
		if o.Text != "" {
			out.Waiting = []string{o.Text}
		}
	}
	return out, true, nil
}
