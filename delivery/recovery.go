package delivery

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// Recoveries lists the in-flight signals of a thread's unfinished runs: a Queue that
// implements it (the store) enables Recover.
type Recoveries interface {
	PendingRecoveries(ctx context.Context, k inbox.ThreadKey, limit int) ([]Recovery, error)
}

// Recovery is one signal awaiting recovery: its logged frame and why the run it went
// into ended (agent.CauseLeaseExpired, CauseAborted, CauseCrashed).
type Recovery struct {
	Frame agent.Frame
	Cause string
}

// RecoveryRule is what a target kind's in-flight signals become when the run they went
// into ends unfinished (lease expiry, abort, a crashed runtime): a row of the target
// table says it, and the store applies it when it closes the run.
type RecoveryRule int

const (
	// RedeliverInFlight: every signal woken with or delivered into the run is delivered
	// again into the thread's next run, marked recovered (stream, webhook: the agent may
	// never have acted on them).
	RedeliverInFlight RecoveryRule = iota
	// RuntimeKeepsAccepted: a signal the kind's runtime accepted is not sent again: the
	// runtime holds it (its thread memory, its own queue), so sending it again would show
	// it twice. What it did not accept is delivered again as above.
	RuntimeKeepsAccepted
)

// RunOpens tells of newly opened runs (agent.Runs).
type RunOpens interface {
	OnOpen(agent.OpenHook)
}

// WithRecovery subscribes the dispatcher's Recover to the runs opens tells of. One
// dispatcher per Runs subscribes: another replica's would deliver the same signals again.
func WithRecovery(opens RunOpens) Option { return func(d *Dispatcher) { d.opens = opens } }

// maxRecovered bounds the signals spliced into one new run.
const maxRecovered = 200

// AttrRecovered marks a signal delivered again after the run it went into ended without
// finishing (lease expiry, abort).
const AttrRecovered = "recovered"

// MetaRecoveredCause is the metadata key of a recovered signal saying why its run ended.
const MetaRecoveredCause = "recoveredCause"

// Recover delivers into a newly opened run the signals that were in flight when the
// thread's previous run ended by lease expiry or abort, in their original order and
// marked recovered="true" (metadata recoveredCause says why the run ended), so the
// agent's next turn has the context it lost. Signals a runtime accepted are not among
// them when its kind's RecoveryRule is RuntimeKeepsAccepted. Each is a new signal (its id derives from the original and the new run, so a repeat within the
// run is logged once); logging it closes the original's recovery in one transaction. On
// the first failure the rest wait for the next run. It is agent.Runs' open hook (see
// WithRecovery), so it also wakes the loop: the new run's lease end is a time the loop
// must wake at (to expire the run and dispatch what waits for idle), and a loop asleep on
// the poll interval would not know of it.
func (d *Dispatcher) Recover(ctx context.Context, run agent.Run) error {
	d.Notify([]inbox.ThreadKey{run.Thread})
	r, ok := d.q.(Recoveries)
	if !ok {
		return nil
	}
	recs, err := r.PendingRecoveries(ctx, run.Thread, maxRecovered)
	if err != nil || len(recs) == 0 {
		return err
	}
	now := d.now()
	for _, rec := range recs {
		f := rec.Frame
		sig := f.Signal
		sig.ID = uuid.NewSHA1(signalNamespace(), []byte("recovered\x00"+f.ID+"\x00"+run.ID)).String()
		sig.Attributes = sig.Attributes.Clone().Set(AttrRecovered, "true")
		meta := make(map[string]any, len(sig.Metadata)+3)
		for k, v := range sig.Metadata {
			meta[k] = v
		}
		delete(meta, MetaTraceparent) // the first delivery's: the redelivery gets its own
		meta["recoveredFrom"], meta["recoveredRun"] = f.ID, f.RunID
		if rec.Cause != "" {
			meta[MetaRecoveredCause] = rec.Cause
		}
		sig.Metadata, sig.AcceptedAt = meta, now
		del := agent.Handoff{Thread: run.Thread, Signal: sig, Behavior: agent.BehaviorDeliver, RunID: run.ID, RecordIDs: f.RecordIDs, Attempt: 1}
		// No route slot: the opener may be a pass that holds it already, and opens are few.
		if _, err := d.deliverOne(ctx, del, []string{f.ID}); err != nil {
			return fmt.Errorf("recover signal %s into run %s: %w", f.ID, run.ID, err)
		}
	}
	d.log.InfoContext(ctx, "recovered in-flight signals", "thread", run.Thread.String(), "run_id", run.ID, "signals", len(recs))
	return nil
}
