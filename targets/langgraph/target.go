// Package langgraph reaches agents served by a LangGraph Agent Server (LangGraph
// Platform, or the open-source JS server @langchain/langgraph-api): a gateway thread is
// one LangGraph thread (a UUIDv5 of agent, resource and thread), a signal becomes a run
// of the configured assistant with the signal as its input, and a Follower keeps the
// thread's presence in step with the server (its runs' webhooks, and polling).
//
// The server does not deduplicate runs: the dispatcher never sends a signal again once
// the server accepted it, but an answer lost after the server accepted (a timeout) is
// retried and starts a second run (its input message carries the signal's id, so the
// thread's state keeps one copy of it).
package langgraph

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Target delivers to one langgraph agent; its follower keeps presence.
type Target struct {
	f *Follower
}

var _ delivery.Target = (*Target)(nil)

// Option configures a Target.
type Option func(*Target)

// WithTracerProvider makes every request to the server a client span of tp carrying
// its traceparent (default: tracing off). url.full shows no path.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(t *Target) { t.f.api.client = httptarget.Traced(t.f.api.client, tp) }
}

// New builds the target of follower f's agent.
func New(f *Follower, opts ...Option) (*Target, error) {
	if f.err != nil {
		return nil, f.err
	}
	t := &Target{f: f}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Deliver sends d: a wake or a delivery into the active thread starts a run (POST
// /threads/{id}/runs, with the multitask strategy busy names for its priority); a
// persisted signal is written into the thread's state (POST /threads/{id}/state) without
// a run. A thread the server runs or waits on (an interrupt) takes no state write, and
// one waiting on an interrupt no run either (a run would drop the question):
// agent.ErrHoldUntilIdle hands such a signal back to wait for the thread to be idle, as
// it does a run busy's reject refuses.
func (t *Target) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	f := t.f
	ctx, tr, unlock, err := f.lock(ctx, d.Thread)
	if err != nil {
		return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("deliver signal %s: %w", d.Signal.ID, err), Retry: true}
	}
	defer unlock()
	if d.Behavior == agent.BehaviorWake && d.RunID != "" {
		// Before the run starts: its answer goes where this wake came from.
		f.woken(tr, d.RunID, d.ReplyTo)
	}
	status, err := t.threadStatus(ctx, d, tr)
	if err != nil {
		return agent.Result{}, err
	}
	running := status == StatusBusy || status == StatusInterrupted
	switch {
	case d.Behavior == agent.BehaviorPersist && running, d.NoWake && d.Behavior != agent.BehaviorPersist:
		// A state write beside a run is lost to it (the run's next checkpoint does not
		// see it), and an active thread's low-only summary never starts a run.
		return t.hold(ctx, d)
	case d.Behavior == agent.BehaviorPersist:
		values, err := f.cfg.input.Render(inputData(d))
		if err != nil {
			return agent.Result{}, fmt.Errorf("render target.input for signal %s: %w", d.Signal.ID, err)
		}
		return f.api.updateState(ctx, d.Thread, values)
	case status == StatusInterrupted:
		return t.hold(ctx, d)
	}
	strategy := f.cfg.Busy.ForHandoff(d)
	if d.DeliverAs == inbox.DeliverAsQueued {
		strategy = Enqueue // a queued message starts the next run, whatever runs now
	}
	if strategy == Reject && status == StatusBusy {
		return t.hold(ctx, d)
	}
	input, err := f.cfg.input.Render(inputData(d))
	if err != nil {
		return agent.Result{}, fmt.Errorf("render target.input for signal %s: %w", d.Signal.ID, err)
	}
	req := runRequest{Input: input, MultitaskStrategy: strategy, Webhook: f.cfg.webhookURL(d.Thread, d.RunID),
		Metadata: map[string]any{MetaAgent: d.Thread.Agent, MetaResource: d.Thread.Resource, MetaThread: d.Thread.Thread,
			MetaSignal: d.Signal.ID, MetaRun: d.RunID}}
	if v, ok := d.StreamOptions["config"]; ok {
		req.Config = v
	}
	if v, ok := d.StreamOptions["context"]; ok {
		req.Context = v
	}
	r, res, err := f.api.createRun(ctx, d.Thread, req)
	if errors.Is(err, errBusy) {
		return t.hold(ctx, d)
	}
	if err != nil {
		return res, err
	}
	tr.ensured = true
	f.started(tr, r, d.RunID)
	if d.RunID == "" {
		// Nothing holds the thread active while this run goes (the signal came outside a
		// run the gateway knows of): a read opens one.
		f.check(d.Thread)
	}
	return res, nil
}

// threadStatus is what the server says of d's thread before d goes: read for a
// delivery into an active thread and for a state write (either may find it waiting on
// an interrupt), and on a wake only the first time this process sees the thread (its
// creation answers it); "" when not read.
func (t *Target) threadStatus(ctx context.Context, d agent.Handoff, tr *tracked) (string, error) {
	f := t.f
	if tr.ensured && d.Behavior == agent.BehaviorWake {
		return "", nil
	}
	if tr.ensured {
		th, found, err := f.api.status(ctx, d.Thread)
		if err != nil {
			return "", err
		}
		if found {
			return th.Status, nil
		}
		tr.ensured = false // the server lost it: created again below
	}
	th, err := f.api.ensureThread(ctx, d.Thread, f.graphID(ctx))
	if err != nil {
		return "", err
	}
	tr.ensured = true
	return th.Status, nil
}

// hold hands d back to wait until the thread is idle (agent.ErrHoldUntilIdle). A
// thread the gateway holds no run on is given one first (the server runs it), so the
// held signal waits for that run's end rather than coming straight back.
func (t *Target) hold(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	f := t.f
	f.check(d.Thread) // the read asks the interrupt's question and closes the run at the end
	if d.RunID == "" {
		if _, _, err := f.runs.Open(ctx, d.Thread, Kind); err != nil {
			return agent.Result{}, &agent.DeliveryError{Err: fmt.Errorf("open a run for the busy LangGraph thread: %w", err), Retry: true}
		}
	}
	return agent.Result{}, fmt.Errorf("signal %s: the LangGraph thread is busy or waits on an interrupt: %w", d.Signal.ID, agent.ErrHoldUntilIdle)
}
