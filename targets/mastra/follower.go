package mastra

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Presence is what the follower changes: *agent.Runs.
type Presence interface {
	// LiveThreads lists the agent's threads with a live run: followed again on Start.
	LiveThreads(ctx context.Context, agentID string) ([]inbox.ThreadKey, error)
	// Live is the thread's open run, or nil.
	Live(ctx context.Context, k inbox.ThreadKey) (*agent.Run, error)
	Open(ctx context.Context, k inbox.ThreadKey, origin string) (agent.Run, bool, error)
	Heartbeat(ctx context.Context, k inbox.ThreadKey, id string) (agent.Run, error)
	// Close ends a run; an aborted one's in-flight signals are recovered with cause.
	Close(ctx context.Context, k inbox.ThreadKey, id, status, cause string) (agent.Run, bool, error)
}

// Follower backoff and pacing.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// heartbeatEvery paces lease renewals while a Mastra run streams chunks.
	heartbeatEvery = 15 * time.Second
	// connectWait bounds how long a delivery waits for its thread's stream to connect.
	connectWait = 5 * time.Second
	// DefaultResyncWait is how long a reconnected stream has to replay the run the
	// gateway still holds open (Mastra replays an active run's chunks to a new
	// subscriber at once) before that run is taken to have ended while away.
	DefaultResyncWait = 3 * time.Second
)

// Follower follows the thread streams of one Mastra agent: a run starts with a `start`
// chunk and ends with `finish` (unless its reason is tool-calls, which continues the
// run), `abort` or `error`. A run suspended on a tool call — `tool-call-approval` (a tool
// that needs approval) or `tool-call-suspended` (a tool that called suspend, e.g.
// ask_user) — stays active, as Mastra's getThreadState keeps it: no finish ends it until
// every suspended call has its result (the run resumed), and the gateway run's lease is
// renewed meanwhile by Mastra's heartbeats. Each start opens (or adopts) the gateway run of the thread;
// each end closes it, and an idle transition is handed to notify (the dispatcher) at
// once. A thread is followed from its delivery until it has been idle (no open run, no
// chunk, no delivery) for the idle period, or until Stop; a dropped stream is reconnected
// with backoff. Start follows the threads whose runs are still live.
type Follower struct {
	// TestSignals are for tests; they do nothing unless a test initialises them.
	TestSignals FollowerSignals

	id       string
	cfg      server
	base     string
	runs     Presence
	notify   func([]inbox.ThreadKey)
	client   *http.Client
	log      *slog.Logger
	now      func() time.Time
	min, max time.Duration
	idle     time.Duration                        // unfollow after this long idle; 0: never
	after    func(time.Duration) <-chan time.Time // the idle timer; it yields times of f.now's clock
	resync   time.Duration
	// approvals is told of tool approvals; nil: none.
	approvals ApprovalHook
	// reconciling: a reconcile with Mastra's suspended runs is under way.
	reconciling atomic.Bool
	// maxFollowed caps the threads followed at once (each holds a goroutine and a
	// connection to Mastra); 0: no cap.
	maxFollowed int
	// replies queues the answers of target.reply: auto; nil: none.
	replies Replier
	// err is why the agent's config cannot be followed (not a mastra target): Start
	// answers it.
	err error

	service.StartStop
	mu      sync.Mutex
	threads map[inbox.ThreadKey]*followed
}

// followed is one thread's stream as Follow sees it.
type followed struct {
	connected chan struct{} // closed once first connected
	failing   atomic.Bool   // the last connection attempt failed: deliveries do not wait
	cancel    context.CancelFunc
	// Guarded by Follower.mu.
	gone       chan struct{} // closed when the thread is no longer followed
	lastActive time.Time     // last chunk or delivery
	running    bool          // a gateway run mirrors an active Mastra run
	// woke is the gateway run the last wake delivery opened and where an answer to that
	// wake goes (target.reply: auto).
	woke wokeRun
}

// FollowerOption configures a Follower.
type FollowerOption func(*Follower)

// WithFollowerClient replaces the HTTP client (no timeout: streams stay open).
func WithFollowerClient(c *http.Client) FollowerOption { return func(f *Follower) { f.client = c } }

// WithBackoff sets the reconnect backoff bounds.
func WithBackoff(min, max time.Duration) FollowerOption {
	return func(f *Follower) { f.min, f.max = min, max }
}

// WithIdleUnfollow stops following a thread once it has had no open run, no chunk and
// no delivery for d (default: twice the agent's run lease); 0 follows until Stop. Each
// followed thread holds a goroutine and an open connection to Mastra.
func WithIdleUnfollow(d time.Duration) FollowerOption { return func(f *Follower) { f.idle = d } }

// WithResyncWait sets how long a reconnected stream has to show that the run the
// gateway kept open is still going (default DefaultResyncWait).
func WithResyncWait(d time.Duration) FollowerOption { return func(f *Follower) { f.resync = d } }

// FollowerSignals are the points of a follower's work tests wait on.
type FollowerSignals struct {
	// Chunk: a chunk that moves a run (start, finish, abort, error, a tool call's
	// approval or suspension) was handled; text deltas are not signalled.
	Chunk service.Signal[Chunk]
	// Exited: a thread's stream goroutine ended.
	Exited service.Signal[inbox.ThreadKey]
	// Reconciled: approvals were reconciled with this many suspended calls.
	Reconciled service.Signal[int]
}

// Chunk is a handled chunk as FollowerSignals.Chunk reports it.
type Chunk struct {
	Thread inbox.ThreadKey
	Type   string
}

// signalled reports the chunk types FollowerSignals.Chunk reports.
func signalled(chunkType string) bool {
	switch chunkType {
	case "start", "finish", "abort", "error", "tool-call-approval", "tool-call-suspended":
		return true
	}
	return false
}

// NewFollower builds the follower of one mastra agent. notify receives threads that
// turned idle (the dispatcher's Notify).
func NewFollower(cfg agent.Config, runs Presence, notify func([]inbox.ThreadKey), base service.Base, opts ...FollowerOption) *Follower {
	srv, err := serverOf(cfg)
	cfg = cfg.WithDefaults()
	base = base.Component("mastra_follower", "agent", cfg.ID)
	f := &Follower{id: cfg.ID, cfg: srv, base: agentBase(srv.Config), runs: runs, notify: notify, client: &http.Client{},
		log: base.Logger, now: base.Now, min: DefaultMinBackoff, max: DefaultMaxBackoff,
		threads: map[inbox.ThreadKey]*followed{},
		idle:    2 * cfg.RunLease, after: time.After, resync: DefaultResyncWait,
		maxFollowed: srv.MaxFollowed, err: err}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Name names the service in logs.
func (f *Follower) Name() string { return "mastra follower " + f.id }

// Start lets Follow start streams until Stop.
func (f *Follower) Start(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return fmt.Errorf("mastra follower: %w", f.err)
	}
	if err := f.StartStop.Start(ctx); err != nil {
		return fmt.Errorf("mastra follower: %w", err)
	}
	f.threads = map[inbox.ThreadKey]*followed{} // what an earlier start followed has ended
	// Runs still open from before a restart: follow them so their end is seen.
	ks, err := f.runs.LiveThreads(ctx, f.id)
	if err != nil {
		f.log.Warn("resume following live threads", "error", err.Error())
	}
	for _, k := range ks {
		f.startLocked(k, true)
	}
	// Approvals pending from before the restart, and suspensions missed meanwhile.
	f.Go(f.reconcile)
	return nil
}

// startLocked starts following k unless it is followed; f.mu is held. resume marks a
// thread whose run was open before a restart: it is resynced like a reconnect.
func (f *Follower) startLocked(k inbox.ThreadKey, resume bool) *followed {
	th, ok := f.threads[k]
	if !ok {
		f.makeRoomLocked()
		ctx, cancel := context.WithCancel(f.Context())
		th = &followed{connected: make(chan struct{}), cancel: cancel, gone: make(chan struct{}), lastActive: f.now()}
		f.threads[k] = th
		started := f.Go(func(context.Context) { f.follow(ctx, k, th, resume) })
		if started && f.idle > 0 {
			f.Go(func(context.Context) { f.unfollowIdle(ctx, k, th) })
		}
		if !started { // stopped meanwhile: nothing follows k
			f.dropLocked(k, th)
		}
	}
	return th
}

// unfollowIdle ends following k once it has been idle for f.idle. The decision is taken
// under f.mu, where Follow marks the thread active, so a delivery never relies on a stream
// about to close: it either keeps this one or starts a new one.
func (f *Follower) unfollowIdle(ctx context.Context, k inbox.ThreadKey, th *followed) {
	wait := f.idle
	for {
		var at time.Time
		select {
		case <-ctx.Done():
			return
		case at = <-f.after(wait):
		}
		f.mu.Lock()
		if f.threads[k] != th { // let go already, to make room for another thread
			f.mu.Unlock()
			return
		}
		idleFor := at.Sub(th.lastActive)
		if th.running || idleFor < f.idle {
			f.mu.Unlock()
			wait = f.idle
			if !th.running {
				wait -= idleFor
			}
			continue
		}
		f.dropLocked(k, th)
		f.mu.Unlock()
		f.log.Debug("stopped following idle thread", "thread", k.String())
		return
	}
}

// dropLocked stops following k; f.mu is held and th is k's entry.
func (f *Follower) dropLocked(k inbox.ThreadKey, th *followed) {
	delete(f.threads, k)
	close(th.gone)
	th.cancel()
}

// makeRoomLocked lets go of the least recently active thread when maxFollowed threads
// are followed, preferring one without an open run (a run let go of ends by its lease
// instead of by Mastra's finish). f.mu is held.
func (f *Follower) makeRoomLocked() {
	if f.maxFollowed <= 0 || len(f.threads) < f.maxFollowed {
		return
	}
	var (
		victim inbox.ThreadKey
		vth    *followed
	)
	for k, th := range f.threads {
		if vth == nil || (vth.running && !th.running) ||
			(vth.running == th.running && th.lastActive.Before(vth.lastActive)) {
			victim, vth = k, th
		}
	}
	f.dropLocked(victim, vth)
	f.log.Info("stopped following the least recently active thread to stay within target.max_followed",
		"thread", victim.String(), "max_followed", f.maxFollowed)
}

// active records a chunk on th and whether a run is open.
func (f *Follower) active(th *followed, running bool) {
	f.mu.Lock()
	th.lastActive, th.running = f.now(), running
	f.mu.Unlock()
}

// Stop ends every stream and waits for their goroutines, or for ctx.
func (f *Follower) Stop(ctx context.Context) error {
	if err := f.StartStop.Stop(ctx); err != nil {
		return fmt.Errorf("stop mastra follower: %w", err)
	}
	return nil
}

// Follow starts following k unless it is followed already, and waits (bounded by ctx and
// a few seconds) until its stream is connected, so a run about to start is seen. While
// the stream cannot connect, deliveries do not wait for it.
func (f *Follower) Follow(ctx context.Context, k inbox.ThreadKey) {
	f.mu.Lock()
	if run := f.Context(); run == nil || run.Err() != nil {
		f.mu.Unlock()
		return
	}
	th := f.startLocked(k, false)
	th.lastActive = f.now()
	f.mu.Unlock()
	if th.failing.Load() {
		return
	}
	t := time.NewTimer(connectWait)
	defer t.Stop()
	select {
	case <-th.connected:
	case <-th.gone:
	case <-ctx.Done():
	case <-t.C:
	}
}

// threadState is one followed thread, owned by its goroutine.
type threadState struct {
	k         inbox.ThreadKey
	th        *followed
	runID     string // the gateway run mirroring Mastra's active run; "" when idle
	mastraRun string
	beatAt    time.Time
	// away is set while the stream is lost with a run open: the thread keeps its last
	// known presence (the run's lease is renewed) until a new stream says otherwise.
	away bool
	// suspended holds the tool calls the run waits on (approval, or a tool's suspend).
	// Bounded by the run's own tool calls; cleared when the run ends.
	suspended map[string]bool
	// woken: the gateway run is one the gateway opened to wake the thread (target.reply:
	// auto answers only those). text is the current step's assistant text, for the answer.
	woken bool
	text  answer
	// openedAt is when the gateway run opened: an answer recalled from Mastra's memory
	// is no older.
	openedAt time.Time
}

func (f *Follower) follow(ctx context.Context, k inbox.ThreadKey, th *followed, resume bool) {
	defer f.TestSignals.Exited.Signal(k)
	st := &threadState{k: k, th: th}
	if resume {
		// The gateway was away (restarted) while this run was open: the first stream
		// tells whether Mastra still runs it.
		if run, err := f.runs.Live(ctx, k); err != nil {
			f.log.Warn("read live run", "thread", k.String(), "error", err.Error())
		} else if run != nil {
			st.runID, st.beatAt, st.away, st.woken, st.openedAt = run.ID, f.now(), true, run.Origin == agent.OriginWake, run.OpenedAt
		}
	}
	var once sync.Once
	backoff := f.min
	for ctx.Err() == nil {
		err := f.stream(ctx, st, func() {
			first := false
			once.Do(func() { close(th.connected); first = true })
			if !first {
				// Reconnected: what changed while away is set right.
				f.Go(f.reconcile)
			}
			th.failing.Store(false)
			backoff = f.min
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			th.failing.Store(true)
		}
		if st.runID != "" {
			st.away = true
			f.keep(ctx, st)
		}
		f.log.Warn("thread stream ended; reconnecting", "thread", k.String(), "error", errString(err), "backoff", backoff.String())
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, f.max)
	}
}

func errString(err error) string {
	if err == nil {
		return "EOF"
	}
	return err.Error()
}

// chunk is the part of a Mastra stream chunk the follower reads.
type chunk struct {
	Type    string `json:"type"`
	RunID   string `json:"runId"`
	Payload struct {
		StepResult struct {
			Reason string `json:"reason"`
		} `json:"stepResult"`
		FinishReason string          `json:"finishReason"`
		Text         string          `json:"text"` // text-delta
		ToolCallID   string          `json:"toolCallId"`
		ToolName     string          `json:"toolName"`
		Args         json.RawMessage `json:"args"`
		// SuspendPayload is what a tool suspended with (ask_user's question).
		SuspendPayload json.RawMessage `json:"suspendPayload"`
	} `json:"payload"`
}

// Chunks of @mastra/core's thread stream that suspend a run on a tool call, and those
// that carry a call's outcome once the run resumes.
const (
	chunkToolApproval  = "tool-call-approval"
	chunkToolSuspended = "tool-call-suspended"
	chunkToolResult    = "tool-result"
	chunkToolError     = "tool-error"
	// chunkToolDenied answers a declined approval: the call ends without running.
	chunkToolDenied = "tool-output-denied"
	// A step (one model turn) begins, and its text streams in deltas.
	chunkStepStart = "step-start"
	chunkTextDelta = "text-delta"
	// maxSuspended bounds the suspended calls remembered per thread; past it the run
	// still counts as suspended.
	maxSuspended = 256
)

// stream reads one connection until it ends. connected is called once the server
// answered 200.
func (f *Follower) stream(ctx context.Context, st *threadState, connected func()) error {
	body, err := json.Marshal(map[string]string{"resourceId": st.k.Resource, "threadId": st.k.Thread})
	if err != nil {
		return err
	}
	u := f.base + "/threads/subscribe"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", httptarget.SafeURL(u), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for hk, hv := range f.cfg.Headers {
		req.Header.Set(hk, hv.Reveal())
	}
	resp, err := httptarget.NoRedirects(f.client).Do(req)
	if err != nil {
		return fmt.Errorf("subscribe %s: transport error", httptarget.SafeURL(u))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return fmt.Errorf("subscribe %s: HTTP %d", httptarget.SafeURL(u), resp.StatusCode)
	}
	connected()
	// Lines are read on their own goroutine so a resync can time out while the stream
	// is quiet; it ends when the body closes (deferred above), and stream waits for it.
	lines, readErr := make(chan string), make(chan error, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
		readErr <- sc.Err()
	}()
	defer wg.Wait()
	defer resp.Body.Close()
	defer close(stop)
	var resync <-chan time.Time
	if st.away {
		t := time.NewTimer(f.resync)
		defer t.Stop()
		resync = t.C
	}
	var data strings.Builder
	for {
		var line string
		select {
		case line = <-lines:
		case err := <-readErr:
			return err
		case <-resync:
			// The new stream replayed nothing: the run ended while the follower was away.
			resync = nil
			f.endAway(ctx, st)
			continue
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case line == "":
			if data.Len() > 0 {
				if resync != nil {
					resync = nil
					f.resynced(ctx, st, data.String())
				}
				f.handle(ctx, st, data.String())
				f.active(st.th, st.runID != "")
				data.Reset()
			}
		case strings.HasPrefix(line, ":"):
			f.beat(ctx, st) // `: heartbeat` keeps a long tool call's run alive
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// keep renews the open run's lease while the stream is lost: the thread keeps its last
// known presence. A run closed meanwhile (through the agent API) is let go.
func (f *Follower) keep(ctx context.Context, st *threadState) {
	if f.now().Sub(st.beatAt) < heartbeatEvery {
		return
	}
	st.beatAt = f.now()
	if _, err := f.runs.Heartbeat(ctx, st.k, st.runID); err != nil {
		if errors.Is(err, agent.ErrRunClosed) || errors.Is(err, agent.ErrRunNotFound) {
			st.runID, st.mastraRun, st.away, st.suspended = "", "", false, nil
			return
		}
		f.log.Warn("renew run while reconnecting", "thread", st.k.String(), "run_id", st.runID, "error", err.Error())
	}
}

// resynced reads the first chunk after a reconnect: the replay of the run still going
// (its start, or any chunk of the same Mastra run) keeps it; anything else means it
// ended while the follower was away.
func (f *Follower) resynced(ctx context.Context, st *threadState, data string) {
	st.away = false
	var c chunk
	if json.Unmarshal([]byte(data), &c) == nil && (c.Type == "start" || (c.RunID != "" && c.RunID == st.mastraRun)) {
		return
	}
	f.endAway(ctx, st)
}

// endAway closes the run held open while the follower was away, at once rather than at
// lease expiry. It is closed as aborted, cause crashed: how it ended is unknown. Its
// in-flight signals that Mastra accepted are not sent again (Mastra holds them). A run
// the gateway is to answer is answered first, from Mastra's memory (recall); when the
// follower stops before that answer is queued the run stays open for the next start.
func (f *Follower) endAway(ctx context.Context, st *threadState) {
	st.away = false
	if st.runID == "" {
		return
	}
	f.log.Info("run ended while the stream was lost; closing it", "thread", st.k.String(), "run_id", st.runID)
	if !f.recall(ctx, st) {
		return
	}
	f.end(ctx, st, agent.RunAborted, agent.CauseCrashed)
}

// handle applies one chunk to the thread's presence.
func (f *Follower) handle(ctx context.Context, st *threadState, data string) {
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		f.log.Warn("unreadable chunk", "thread", st.k.String(), "error", err.Error())
		return
	}
	if signalled(c.Type) {
		defer f.TestSignals.Chunk.Signal(Chunk{st.k, c.Type})
	}
	switch c.Type {
	case "start":
		run, _, err := f.runs.Open(ctx, st.k, Kind)
		if err != nil {
			f.log.Error("open run", "thread", st.k.String(), "error", err.Error())
			return
		}
		// A (re)connect replays the active run from its start, suspensions included.
		st.runID, st.mastraRun, st.beatAt, st.suspended = run.ID, c.RunID, f.now(), nil
		st.woken, st.openedAt = run.Origin == agent.OriginWake, run.OpenedAt
		st.text.reset()
	case chunkStepStart:
		st.text.reset() // the answer is the last step's text
		f.beat(ctx, st)
	case chunkTextDelta:
		st.text.add(c.Payload.Text)
		f.beat(ctx, st)
	case chunkToolApproval, chunkToolSuspended:
		if st.suspended == nil {
			st.suspended = map[string]bool{}
		}
		if len(st.suspended) < maxSuspended {
			st.suspended[c.Payload.ToolCallID] = true
		}
		switch {
		case f.approvals == nil:
		case c.Type == chunkToolApproval:
			f.approvals.ToolApproval(ctx, st.k, c.RunID, c.Payload.ToolCallID, c.Payload.ToolName, c.Payload.Args)
		default:
			f.approvals.ToolSuspended(ctx, st.k, c.RunID, c.Payload.ToolCallID, c.Payload.ToolName, c.Payload.SuspendPayload)
		}
		f.beat(ctx, st)
	case chunkToolResult, chunkToolError, chunkToolDenied:
		if st.suspended[c.Payload.ToolCallID] && f.approvals != nil {
			f.approvals.ToolAnswered(ctx, st.k, c.Payload.ToolCallID)
		}
		delete(st.suspended, c.Payload.ToolCallID)
		f.beat(ctx, st)
	case "finish":
		reason := c.Payload.StepResult.Reason
		if reason == "" {
			reason = c.Payload.FinishReason
		}
		if reason == "tool-calls" || reason == "suspended" || len(st.suspended) > 0 {
			// The run goes on, or waits suspended: the thread stays active.
			f.beat(ctx, st)
			return
		}
		if !f.answer(ctx, st) {
			return // stopping: the run stays open, its answer for the next start to recall
		}
		f.end(ctx, st, agent.RunFinished, "")
	case "abort":
		f.end(ctx, st, agent.RunAborted, agent.CauseAborted)
	case "error":
		f.end(ctx, st, agent.RunAborted, agent.CauseCrashed)
	default:
		f.beat(ctx, st)
	}
}

func (f *Follower) end(ctx context.Context, st *threadState, status, cause string) {
	if st.runID == "" {
		return
	}
	id, mastraRun := st.runID, st.mastraRun
	st.runID, st.mastraRun, st.suspended, st.woken = "", "", nil, false
	st.text.reset()
	if f.approvals != nil && mastraRun != "" {
		f.approvals.RunEnded(ctx, st.k, mastraRun)
	}
	_, idle, err := f.runs.Close(ctx, st.k, id, status, cause)
	if err != nil {
		f.log.Error("close run", "thread", st.k.String(), "run_id", id, "error", err.Error())
		return
	}
	if idle {
		f.notify([]inbox.ThreadKey{st.k})
	}
}

// beat renews the gateway run's lease, at most every heartbeatEvery.
func (f *Follower) beat(ctx context.Context, st *threadState) {
	if st.runID == "" || f.now().Sub(st.beatAt) < heartbeatEvery {
		return
	}
	st.beatAt = f.now()
	if _, err := f.runs.Heartbeat(ctx, st.k, st.runID); err != nil {
		f.log.Warn("renew run", "thread", st.k.String(), "run_id", st.runID, "error", err.Error())
		if errors.Is(err, agent.ErrRunClosed) || errors.Is(err, agent.ErrRunNotFound) {
			// The lease lapsed while Mastra still runs: adopt a fresh run.
			if run, _, oerr := f.runs.Open(ctx, st.k, Kind); oerr == nil {
				st.runID, st.openedAt = run.ID, run.OpenedAt
			}
		}
	}
}
