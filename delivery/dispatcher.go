package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/attempt"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// Defaults of the dispatcher.
const (
	DefaultLease = time.Minute
	// DefaultBatch is the threads one pass claims. A pass costs a few commits whatever
	// its size, so a pass of 64 threads fell behind 1,000 threads a second (10,000
	// threads, p99 3 s from 2xx to frame); 256 is also the largest batch the store reads
	// in one statement.
	DefaultBatch        = 256
	DefaultPerThread    = 200
	DefaultWorkers      = DefaultBatch
	DefaultPollInterval = 30 * time.Second
	DefaultErrorBackoff = 5 * time.Second
)

// Dispatcher delivers due inbox records to agent threads. Its loop sleeps until the
// store's next due time, a change notification (Notify) or the poll interval, whichever
// comes first; RunOnce is one pass and what tests drive with a fake clock.
type Dispatcher struct {
	q       Queue
	runs    Runs
	pub     Publisher
	obs     Observer
	health  health
	log     *slog.Logger
	now     func() time.Time
	rnd     func() float64
	owner   string
	lease   time.Duration
	poll    time.Duration
	errWait time.Duration
	batch   int
	perPass int
	workers int
	// live is what a config reload swaps (Reconfigure): a pass reads it once, so its
	// threads are planned and sent with one table, and in-flight sends keep theirs.
	live    atomic.Pointer[table]
	initial table // what the options set; New builds the first table from it

	kick  *Kick
	opens RunOpens // nil: no recovery subscription
	// snoozes releases due snoozed records at the start of a pass (nil: none).
	snoozes Snoozes
	// releases releases records whose hold ended at the start of a pass, and holder
	// holds a due record at the last moment (nil: neither).
	releases Releases
	holder   inbox.Holder
	// replyTo vouches for the replyTo a delivery carries (WithReplyProvenance).
	replyTo agent.ReplyProvenance
	trace   tracing // spans of passes and deliveries (WithTracerProvider)

	service.StartStop
	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Pass service.Signal[Pass] // a pass of the loop ended
	}
}

// Pass is what one pass of the loop did: the threads it claimed, and its error.
type Pass struct {
	Claimed int
	Err     error
}

// New builds a dispatcher over q that reaches agents through routes (keyed by agent id)
// and tells pub about every thread whose log it appended to.
func New(q Queue, runs Runs, pub Publisher, routes map[string]Route, base service.Base, opts ...Option) *Dispatcher {
	base = base.Component("delivery")
	d := &Dispatcher{
		q: q, runs: runs, pub: pub, log: base.Logger, now: base.Now, rnd: rand.Float64,
		owner: inbox.NewID(), initial: table{interval: inbox.DefaultSummaryInterval}, lease: DefaultLease,
		poll: DefaultPollInterval, errWait: DefaultErrorBackoff, batch: DefaultBatch, perPass: DefaultPerThread,
		workers: DefaultWorkers,
	}
	for _, o := range opts {
		o(d)
	}
	if d.kick == nil {
		d.kick = NewKick()
	}
	d.health.log = d.log
	d.live.Store(newTable(routes, d.initial, nil))
	if d.workers < 1 {
		d.workers = 1
	}
	if d.batch < 1 {
		d.batch = 1
	}
	if d.opens != nil {
		d.opens.OnOpen(d.Recover)
	}
	return d
}

// Notify tells the dispatcher that threads changed (new records, an idle transition).
// It never blocks; it matches inbox.WithChangeHook.
func (d *Dispatcher) Notify(ks []inbox.ThreadKey) { d.kick.Notify(ks) }

// Name names the service in start and stop errors.
func (d *Dispatcher) Name() string { return "dispatcher" }

// Start runs the loop until Stop. A claim that was not full took every thread due when
// it ran; what fell due since came with a Notify (new records, an idle thread, a target
// back up) or at a time NextDue knows, so a pass that would find nothing is not run (it
// cost as much CPU as the pass that did the work).
func (d *Dispatcher) Start(ctx context.Context) error {
	loop := service.Loop[Pass]{
		Base: service.Base{Logger: d.log, Now: d.now},
		Pass: func(ctx context.Context) (Pass, bool, error) {
			n, full, err := d.pass(ctx)
			return Pass{n, err}, full, err // full: the claim left due threads behind
		},
		Failed:    "dispatch pass failed",
		Signal:    &d.TestSignals.Pass,
		NextDue:   func(ctx context.Context) (*time.Time, error) { return d.q.NextDue(ctx, d.now()) },
		Kick:      d.kick.k.C(),
		Interval:  d.poll,
		ErrorWait: d.errWait,
	}
	return d.StartStop.Start(ctx, loop.Run)
}

// RunOnce closes lapsed runs, probes down targets that are due a probe, claims due
// threads (of targets that are up) and dispatches them. It returns how many threads it
// claimed.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	n, _, err := d.pass(ctx)
	return n, err
}

// pass is RunOnce; full reports that the claim took as many threads as it may, so more
// may be due.
func (d *Dispatcher) pass(ctx context.Context) (n int, full bool, err error) {
	var errs []error
	if _, err := d.runs.Expire(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := d.health.refresh(ctx); err != nil {
		errs = append(errs, fmt.Errorf("read target health: %w", err))
	}
	if d.snoozes != nil {
		if _, err := d.snoozes.ReleaseSnoozed(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if d.releases != nil {
		if _, err := d.releases.ReleaseHeld(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	now := d.now()
	probes, err := d.claimProbes(ctx, now)
	if err != nil {
		errs = append(errs, err)
	}
	keys, err := d.q.ClaimThreads(ctx, d.owner, now, now.Add(d.lease), d.batch)
	if err != nil {
		errs = append(errs, fmt.Errorf("claim due threads: %w", err))
	}
	full = len(keys) >= d.batch
	isProbe := make(map[inbox.ThreadKey]bool, len(probes))
	for _, k := range probes {
		isProbe[k] = true
	}
	keys = append(probes, keys...)
	ctx, span := d.trace.startPass(ctx, len(keys))
	var due atomic.Int64 // the records the pass found due, for its span
	defer func() { endPass(span, due.Load(), err) }()
	work := d.readWork(ctx, keys, now)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, d.workers)
	for i, k := range keys {
		probe := isProbe[k]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The route's slot first: a thread waiting on a saturated target holds no
			// worker that another agent's thread could use.
			release, err := d.acquire(ctx, k.Agent)
			if err != nil {
				return // shutting down; the lease lapses and the thread is claimed again
			}
			defer release()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := d.dispatchThread(ctx, k, work[i], now, probe, &due); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("dispatch %s: %w", k, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return len(keys), full, errors.Join(errs...)
}

// readWork reads the claimed threads' work in one go, except for threads of a route with
// a concurrency bound: those may wait for a slot, so their pass reads its thread once it
// has one (nil here) and plans with presence and records as they are then.
func (d *Dispatcher) readWork(ctx context.Context, keys []inbox.ThreadKey, now time.Time) []*Work {
	out := make([]*Work, len(keys))
	var idx []int
	var batch []inbox.ThreadKey
	for i, k := range keys {
		if _, bounded := d.live.Load().slots[k.Agent]; !bounded {
			idx, batch = append(idx, i), append(batch, k)
		}
	}
	if len(batch) == 0 {
		return out
	}
	ws, err := d.q.ThreadsWork(ctx, batch, now, d.perPass)
	if err != nil {
		// Each pass then reads its own thread (and holds it if that fails too).
		d.log.WarnContext(ctx, "read claimed threads", "threads", len(batch), "error", err.Error())
		return out
	}
	for j, i := range idx {
		out[i] = &ws[j]
	}
	return out
}

// claimProbes takes the probe slot of every down target whose probe is due and leases
// the thread of its oldest due record: that thread's pass is the probe.
func (d *Dispatcher) claimProbes(ctx context.Context, now time.Time) ([]inbox.ThreadKey, error) {
	if d.health.h == nil {
		return nil, nil
	}
	var out []inbox.ThreadKey
	var errs []error
	for _, st := range d.health.down() {
		r, ok := d.live.Load().routes[st.Agent]
		if !ok || r.Target == nil || (st.NextProbeAt != nil && st.NextProbeAt.After(now)) {
			continue
		}
		ok, err := d.health.h.ClaimProbe(ctx, st.Agent, now, now.Add(r.ProbeInterval))
		if err != nil {
			errs = append(errs, fmt.Errorf("claim probe of %s: %w", st.Agent, err))
			continue
		}
		if !ok {
			continue // another replica probes this time
		}
		k, found, err := d.health.h.ClaimProbeThread(ctx, st.Agent, d.owner, now, now.Add(d.lease))
		if err != nil {
			errs = append(errs, fmt.Errorf("claim probe thread of %s: %w", st.Agent, err))
			continue
		}
		if found {
			out = append(out, k)
		}
	}
	return out, errors.Join(errs...)
}

// acquire takes one of the agent's route slots, if its route is bounded.
func (d *Dispatcher) acquire(ctx context.Context, agentID string) (func(), error) {
	slot, ok := d.live.Load().slots[agentID]
	if !ok {
		return func() {}, nil
	}
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dispatchThread runs one pass over a claimed thread and commits its outcome. read is its
// work when the pass read it already (nil: read it now). claimed is
// when its lease began: nothing is sent once half the lease is gone, since a lapsed lease
// lets another replica claim the thread and send the same records. probe marks the pass
// that probes a down target: its first send is the probe.
func (d *Dispatcher) dispatchThread(ctx context.Context, k inbox.ThreadKey, read *Work, claimed time.Time, probe bool, due *atomic.Int64) error {
	renewed := false
	if at := d.now(); at.After(claimed.Add(d.lease / 2)) {
		// The claim aged before this thread's turn (reading the pass's work or waiting for
		// a worker took half the lease: a loaded machine). Postponing everything would
		// make the next pass age the same way, and nothing would ever go out: renew the
		// lease and read the thread afresh instead.
		ok, err := d.q.RenewThread(ctx, d.owner, k, at.Add(d.lease))
		if err != nil || !ok {
			return err // lost (another pass has it) or unknown: the lease lapses and it is claimed again
		}
		claimed, read, renewed = at, nil, true
	}
	now := d.now()
	stale := claimed.Add(d.lease / 2)
	o := Outcome{Thread: k, Now: now}
	if read == nil {
		ws, err := d.q.ThreadsWork(ctx, []inbox.ThreadKey{k}, now, d.perPass)
		if err != nil {
			hold := now.Add(d.errWait)
			o.HoldUntil = &hold
			return errors.Join(err, d.complete(o, d.owner))
		}
		read = &ws[0]
	}
	w := *read
	due.Add(int64(len(w.Records)))
	w.Records = d.holdDue(&o, w.Records, now)
	live := d.live.Load()
	route, ok := live.routes[k.Agent]
	if !ok || route.Target == nil {
		msg := fmt.Sprintf("agent %q has no delivery target configured", k.Agent)
		for _, r := range w.Records {
			o.Failures = append(o.Failures, Failure{RecordID: r.ID, Attempts: r.Attempts, Error: msg, Failed: true})
		}
		d.log.WarnContext(ctx, "records failed: no target", "agent", k.Agent, "records", len(w.Records))
		return d.complete(o, d.owner)
	}
	p := planThread(w, now, live.interval)
	if live.detailed {
		for i := range p.items {
			if p.items[i].summary {
				p.items[i].signal.Contents = agent.DetailedSummary(p.items[i].records)
			}
		}
	}
	o.Reschedules = p.reschedules
	runID := w.RunID
	var spent string // the budget's reason once a wake found it spent
	for i, it := range p.items {
		if at := d.now(); at.After(stale) && (i > 0 || !renewed) {
			// Waiting for a route slot or slow sends used up the lease: commit what went
			// out and leave the rest due, for a pass under a fresh lease. A renewed claim
			// sends its first item whatever the machine's load, so the thread moves on.
			d.postpone(&o, p.items[i:], at)
			break
		}
		action := agent.BehaviorDeliver
		switch {
		case it.persist, it.noWake && runID == "":
			action = agent.BehaviorPersist
		case runID == "":
			action = agent.BehaviorWake
		}
		if action == agent.BehaviorWake {
			exempt := it.exempt()
			res := agent.WakeResult{Outcome: agent.WakeSpent}
			if exempt || spent == "" {
				var err error
				if res, err = d.runs.Wake(ctx, k, agent.WakeRequest{Exempt: exempt, Rank: it.rank, Since: it.created}); err != nil {
					d.log.ErrorContext(ctx, "wake failed", "thread", k.String(), "error", err.Error())
					d.postpone(&o, p.items[i:], now.Add(d.errWait))
					break
				}
			}
			switch res.Outcome {
			case agent.WakeQueued:
				// max_concurrent_wakes: the thread waits its turn; a closing wake run
				// makes it due again, or res.Until at the latest.
				d.postpone(&o, p.items[i:], res.Until)
				o.WakeQueued = true
			case agent.WakeSpent:
				spent = cmp.Or(res.Reason, spent)
				if it.summary {
					action = agent.BehaviorPersist // paced like every summary, without waking
					break
				}
				d.hold(&o, it, spent)
				continue
			default:
				runID = res.Run.ID
			}
			if res.Outcome == agent.WakeQueued {
				break
			}
		}
		if d.send(ctx, &o, route, it, action, runID, probe && i == 0) {
			continue
		}
		if ctx.Err() != nil {
			// Shutting down: not the target's fault, so no attempt is counted.
			d.postpone(&o, p.items[i:], now)
			break
		}
		if last := o.Failures[len(o.Failures)-1]; !last.Failed {
			// The target is struggling: leave the rest for the retry time, not now.
			d.postpone(&o, p.items[i+1:], *last.NextAttemptAt)
			break
		}
	}
	return d.complete(o, d.owner)
}

// send hands one item to the target and records the result in o. It reports false
// without recording anything when the failure is only ctx ending; true when the target
// accepted it, or holds it until the thread turns idle (agent.ErrHoldUntilIdle). probe
// marks the probe of a down target, which never counts against max_attempts.
func (d *Dispatcher) send(ctx context.Context, o *Outcome, route Route, it item, action agent.Behavior, runID string, probe bool) bool {
	ids := make([]string, len(it.records))
	// tries counts every attempt of the records; round only those since a redelivery
	// or a delivered summary, which max_attempts and the backoff go by.
	tries, round := 1, 1
	for i, r := range it.records {
		ids[i] = r.ID
		tries = max(tries, r.Attempts+1)
		round = max(round, r.Attempts-r.AttemptsBefore+1)
	}
	del := agent.Handoff{Thread: o.Thread, Signal: it.signal, Behavior: action, RunID: runID, RecordIDs: ids, Attempt: tries,
		DeliverAs: it.deliverAs, NoWake: it.noWake, StreamOptions: d.streamOptions(route, it, action, o.Now),
		ReplyTo: d.replyTo.ReplyToOf(it.records)}
	if probe && d.obs != nil {
		if ho, ok := d.obs.(HealthObserver); ok {
			ho.TargetProbe(o.Thread.Agent)
		}
	}
	ctx, span := d.trace.startDeliver(ctx, route.Kind, del, it.records)
	att, err := d.try(ctx, route, del, o.Now)
	if err != nil && ctx.Err() != nil {
		endDeliver(span, false, true, att.Error) // shutting down: sent again later, not counted
		return false
	}
	if errors.Is(err, agent.ErrHoldUntilIdle) {
		// Not a failure: the runtime takes it once the thread is idle (it waits on a
		// person, or refuses a second run). It goes in full at the idle transition.
		endDeliver(span, false, true, att.Error)
		d.holdUntilIdle(o, it)
		return true
	}
	if err == nil {
		endDeliver(span, true, false, "")
		if d.health.succeeded(ctx, o.Thread.Agent, o.Now) {
			d.Notify(nil) // the backlog of the other threads goes out at once
		}
		o.Attempts = append(o.Attempts, att)
		o.Frames = append(o.Frames, d.trace.traceFrame(ctx, agent.SignalFrame(del, o.Now)))
		for _, r := range it.records {
			sent := Sent{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, SignalID: it.signal.ID, Attempts: tries,
				NetKey: r.NetKey, State: r.State, RestState: r.RestState}
			if it.summary {
				o.Summarized = append(o.Summarized, sent)
			} else {
				o.Delivered = append(o.Delivered, sent)
			}
		}
		if it.summary {
			o.SummaryAt = &o.Now
		}
		return true
	}
	msg := att.Error
	failure := agent.DeliveryFailure(err)
	retry := failure.Retry
	var retryAt *time.Time
	if t, ok := attempt.After(failure.RetryAfter, o.Now); ok {
		retryAt = &t
	}
	// Only a failure that may pass later says the target is unwell; a permanent 4xx is
	// the record's problem.
	st := TargetState{State: TargetUp}
	if retry {
		st = d.health.failed(ctx, route, o.Thread.Agent, o.Now, retryAt, msg)
	}
	first := o.Now
	for _, r := range it.records {
		if r.FirstAttemptAt != nil && r.FirstAttemptAt.Before(first) {
			first = *r.FirstAttemptAt
		}
	}
	capped := route.MaxAttempts > 0 && round >= route.MaxAttempts && !probe
	expired := !o.Now.Before(first.Add(route.MaxAge))
	failed := !retry || capped || expired
	var next *time.Time
	if !failed {
		// While the target is down this only decides when the record may be probed
		// again: a record the target keeps refusing backs off, so the next probe tries
		// another and one poison record cannot keep the target down.
		t := attempt.NextAt(o.Now, round, d.rnd)
		if retryAt != nil {
			t = *retryAt
		}
		next, att.Outcome = &t, OutcomeRetry
	}
	endDeliver(span, false, !failed, msg)
	o.Attempts = append(o.Attempts, att)
	for _, r := range it.records {
		o.Failures = append(o.Failures, Failure{RecordID: r.ID, Attempts: tries, FirstAttemptAt: first, NextAttemptAt: next,
			Error: msg, Failed: failed})
	}
	lvl := slog.LevelWarn
	switch {
	case failed:
		lvl = slog.LevelError
	case st.State == TargetDown:
		lvl = slog.LevelDebug // the outage was logged once, when the target went down
	}
	d.log.Log(ctx, lvl, "delivery failed", "thread", o.Thread.String(), "signal_id", it.signal.ID,
		"attempt", tries, "outcome", att.Outcome, "error", msg)
	return false
}

// try hands del to the route's target and describes the call as an attempt row at
// `at`: delivered with the answer's status, or failed with the redacted error and the
// failure's status (a pass may still turn a failure into a retry).
func (d *Dispatcher) try(ctx context.Context, route Route, del agent.Handoff, at time.Time) (Attempt, error) {
	started := time.Now()
	res, err := route.Target.Deliver(ctx, del)
	att := Attempt{Thread: del.Thread, Target: route.Kind, SignalID: del.Signal.ID, RecordIDs: del.RecordIDs,
		Attempt: del.Attempt, Outcome: OutcomeDelivered, StatusCode: res.Status, Duration: time.Since(started), At: at}
	if err != nil {
		att.Outcome, att.Error = OutcomeFailed, attempt.Redact(err.Error(), d.live.Load().secrets)
		att.StatusCode = agent.DeliveryFailure(err).Status
	}
	return att, err
}

// streamOptions are the ifIdle.streamOptions of an item that may wake its thread (a
// mastra target wakes on deliver too, when the run ended meanwhile), resolved now, first
// match wins: those a record was created with (the summary's records in its order),
// the first matching policy rule's, then the target's. A persisted or low-only item
// never wakes and carries none, as Mastra sends a low-only summary.
func (d *Dispatcher) streamOptions(route Route, it item, action agent.Behavior, now time.Time) map[string]any {
	if action == agent.BehaviorPersist || it.noWake {
		return nil
	}
	for _, r := range it.records {
		if r.StreamOptions != nil {
			return r.StreamOptions
		}
	}
	if opts := d.live.Load().options; opts != nil {
		presence := inbox.PresenceIdle
		if action == agent.BehaviorDeliver {
			presence = inbox.PresenceActive
		}
		for _, r := range it.records {
			if so := opts.StreamOptions(r, presence, now); so != nil {
				return so
			}
		}
	}
	return route.StreamOptions
}

// hold turns the records of a full notification the wake budget refused into
// summary-only records for the thread's next summary.
func (d *Dispatcher) hold(o *Outcome, it item, reason string) {
	for _, r := range it.records {
		why, _, _ := strings.Cut(r.Reason, "; wake budget") // held again: one note, not two
		o.Holds = append(o.Holds, Hold{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount,
			Reason: why + "; " + reason + " → held for the next summary"})
	}
	d.log.Debug("wake held", "thread", o.Thread.String(), "records", len(it.records), "reason", reason)
}

// holdUntilIdle reschedules an item's records to go in full when the thread turns idle
// (the store makes them due at that transition, or at once when it happened meanwhile).
func (d *Dispatcher) holdUntilIdle(o *Outcome, it item) {
	for _, r := range it.records {
		o.Reschedules = append(o.Reschedules, Reschedule{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, FullWhenIdle: true})
	}
	d.log.Debug("held until the thread is idle", "thread", o.Thread.String(), "signal_id", it.signal.ID, "records", len(it.records))
}

// postpone reschedules the records of items not attempted in this pass.
func (d *Dispatcher) postpone(o *Outcome, items []item, at time.Time) {
	for _, it := range items {
		for _, r := range it.records {
			o.Reschedules = append(o.Reschedules, Reschedule{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, DueAt: &at})
		}
	}
}

// commitTimeout bounds one commit: on PostgreSQL its transaction; on SQLite the wait for
// a place in the writer's queue, after which a pass's record waits its turn however slow
// the writer is (redoing the pass would not make it faster).
const commitTimeout = 10 * time.Second

// complete commits a pass detached from the pass's context: what a target accepted must
// be recorded even while shutting down, or it would be sent again. Threads whose log grew
// are published after the commit.
func (d *Dispatcher) complete(o Outcome, owner string) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	logged, err := d.commit(ctx, owner, o)
	if err != nil {
		return fmt.Errorf("complete pass: %w", err)
	}
	// Observed before publishing, so whoever sees a frame also sees it counted.
	if d.obs != nil {
		for _, a := range o.Attempts {
			d.obs.DeliveryAttempt(a.Target, a.Outcome)
		}
		kind := d.live.Load().routes[o.Thread.Agent].Kind
		for _, f := range o.Frames {
			if f.Event == agent.EventSignal {
				d.obs.SignalSent(kind, string(f.Behavior))
			}
		}
	}
	if len(o.Frames) > 0 {
		d.trace.publish(d.live.Load().routes[o.Thread.Agent].Kind, o.Frames, func() { d.publish(o, logged) })
	}
	return nil
}

// Deliver sends one signal that does not come from the inbox (the agent API's signals)
// straight to the thread's target, then logs it and the attempt. There is no retry: the
// caller learns the outcome and may send again with the same signal id, which the log
// keeps only once.
func (d *Dispatcher) Deliver(ctx context.Context, del agent.Handoff) (agent.Result, error) {
	if logged, ok := d.q.(frameGetter); ok && del.Signal.ID != "" {
		// A sender repeating an id the thread already logged: the target accepted it once
		// and some (Mastra) would show it twice. The API answers repeats before this; here
		// a concurrent resend that passed that check is caught.
		if _, err := logged.GetFrame(ctx, del.Thread, del.Signal.ID); err == nil {
			return agent.Result{}, fmt.Errorf("deliver signal %s: %w", del.Signal.ID, agent.ErrSignalLogged)
		}
	}
	release, err := d.acquire(ctx, del.Thread.Agent)
	if err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("deliver signal %s: %w", del.Signal.ID, err), Retry: true}
	}
	defer release()
	return d.deliverOne(ctx, del, nil)
}

// frameGetter reads a logged signal by id (the store).
type frameGetter interface {
	GetFrame(ctx context.Context, k inbox.ThreadKey, id string) (agent.Frame, error)
}

// deliverOne sends one signal outside a pass and logs it with its attempt; recovered
// lists the in-flight signals it redelivers, closed in the same transaction.
func (d *Dispatcher) deliverOne(ctx context.Context, del agent.Handoff, recovered []string) (agent.Result, error) {
	route, ok := d.live.Load().routes[del.Thread.Agent]
	if !ok || route.Target == nil {
		return agent.Result{}, fmt.Errorf("agent %q has no delivery target configured", del.Thread.Agent)
	}
	if del.Attempt == 0 {
		del.Attempt = 1
	}
	if del.StreamOptions == nil && del.Behavior != agent.BehaviorPersist && !del.NoWake {
		del.StreamOptions = route.StreamOptions // the sender gave none: the target's
	}
	now := d.now()
	ctx, span := d.trace.startDeliver(ctx, route.Kind, del, nil)
	att, err := d.try(ctx, route, del, now)
	endDeliver(span, err == nil, false, att.Error) // no retry: the caller decides
	o := Outcome{Thread: del.Thread, Now: now}
	var live *agent.Frame // a transient signal's: handed to live subscribers, never logged
	if err == nil {
		if d.health.succeeded(ctx, del.Thread.Agent, now) {
			d.Notify(nil)
		}
		f := d.trace.traceFrame(ctx, agent.SignalFrame(del, now))
		if del.Signal.Transient {
			live = &f
		} else {
			o.Frames = []agent.Frame{f}
		}
		o.Recovered = recovered
	}
	o.Attempts = []Attempt{att}
	// No lease is held (owner ""), so this only appends.
	if lerr := d.complete(o, ""); lerr != nil {
		if err == nil {
			return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("log signal %s: %w", del.Signal.ID, lerr), Retry: true}
		}
		d.log.ErrorContext(ctx, "record delivery attempt", "signal_id", del.Signal.ID, "error", lerr.Error())
	}
	if err != nil {
		return agent.Result{}, err
	}
	if lp, ok := d.pub.(agent.LivePublisher); ok && live != nil {
		d.trace.publish(route.Kind, []agent.Frame{*live}, func() { lp.PublishLive(del.Thread, *live) })
	}
	return agent.Result{Status: att.StatusCode}, nil
}
