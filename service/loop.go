package service

import (
	"context"
	"time"
)

// Loop is the shape of a service that works in passes (the dispatcher, the reply
// outbox, the watch sweep, retention, schedules, the silence refresh, the approvals
// sweep, the broker's poll): run a pass; while work is waiting run the next at once
// (drain); else sleep until the next due time, a kick or Interval, whichever comes
// first. A failed pass is logged and followed by ErrorWait. A service builds one in
// its Start and hands Run to StartStop.Start.
type Loop[P any] struct {
	// Base is where failures are logged and what time it is (NextDue's times are of
	// that clock).
	Base
	// Pass runs one pass. p is what Signal records; more reports that work is waiting
	// now, so the next pass runs at once (unless err); err is a failed pass.
	Pass func(ctx context.Context) (p P, more bool, err error)
	// Failed is the message a failed pass is logged with, at error level; "": the pass
	// logs its own failures.
	Failed string
	// Signal, when set, records every pass that ended while the loop ran (a test's
	// TestSignals field).
	Signal *Signal[P]
	// NextDue, when set, is asked after a pass that left nothing waiting when work
	// falls due next (nil: nothing it knows of); the loop wakes then if that comes
	// before Interval. A failure is logged and followed by ErrorWait.
	NextDue func(ctx context.Context) (*time.Time, error)
	// Kick ends a sleep early (new work was announced); nil: nothing does.
	Kick <-chan struct{}
	// Interval is the longest sleep between two passes: the poll that catches what no
	// kick announced, or the period of a loop that has nothing else.
	Interval time.Duration
	// ErrorWait is the sleep after a failed pass (or NextDue); zero is Interval.
	ErrorWait time.Duration
	// WaitFirst sleeps before the first pass (the service ran one in its Start).
	WaitFirst bool
	// Wait, when set, replaces the sleep, Kick and timer both: it waits d (or what a
	// test decides) and reports false when ctx ended first. Tests drive passes with it.
	Wait func(ctx context.Context, d time.Duration) bool
}

// Run runs passes until ctx ends. A pass that returns once ctx ended is neither
// logged nor signalled: it was cut short by the stop.
func (l Loop[P]) Run(ctx context.Context) {
	l.Base = l.withDefaults()
	if l.WaitFirst && !l.sleep(ctx, l.Interval) {
		return
	}
	for {
		p, more, err := l.Pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && l.Failed != "" {
			l.Logger.Error(l.Failed, "error", err.Error())
		}
		if l.Signal != nil {
			l.Signal.Signal(p)
		}
		if more && err == nil {
			continue // drain
		}
		if !l.sleep(ctx, l.idle(ctx, err)) {
			return
		}
	}
}

// idle is the sleep after a pass that left nothing waiting (or failed). What fell
// due since the pass came with a kick, or at a time NextDue knows: a pass that would
// find nothing is not run.
func (l Loop[P]) idle(ctx context.Context, err error) time.Duration {
	errWait := l.ErrorWait
	if errWait <= 0 {
		errWait = l.Interval
	}
	if err != nil {
		return errWait
	}
	wait := l.Interval
	if l.NextDue == nil {
		return wait
	}
	next, err := l.NextDue(ctx)
	switch {
	case err != nil:
		l.Logger.Error("read next due time", "error", err.Error())
		return errWait
	case next != nil:
		return min(wait, max(next.Sub(l.Now()), 0))
	}
	return wait
}

// sleep waits d, a kick or the end of ctx (false).
func (l Loop[P]) sleep(ctx context.Context, d time.Duration) bool {
	if l.Wait != nil {
		return l.Wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-l.Kick:
	case <-t.C:
	}
	return true
}

// Kick wakes a Loop (its C is the Loop's Kick). Kicks never block and coalesce: one
// waiting is enough to run the next pass, which sees everything announced before it.
type Kick struct{ c chan struct{} }

// NewKick builds a kick.
func NewKick() *Kick { return &Kick{c: make(chan struct{}, 1)} }

// Kick wakes the loop; it never blocks.
func (k *Kick) Kick() {
	select {
	case k.c <- struct{}{}:
	default:
	}
}

// C is what the loop waits on.
func (k *Kick) C() <-chan struct{} { return k.c }
