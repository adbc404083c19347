// Package service is the shape of the gateway's long-lived parts (the dispatcher,
// pollers, Socket Mode clients, followers, brokers, the approvals worker, retention):
// each embeds a Base (its logger and clock, given as one value) and a StartStop (its
// goroutines, started by Start and ended by Stop), exposes Signals tests wait on
// instead of sleeping, and, when it works in passes, runs them in a Loop.
package service

import (
	"context"
	"log/slog"
	"time"
)

// Base is what every service is given: where it logs and what time it is.
type Base struct {
	// Logger is where the service logs; nil discards (a library part never writes to
	// the process-wide default logger unasked).
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Component fills Base's defaults and tags its logger with the service's component
// (and any further key-value pairs), as every service logs.
func (b Base) Component(name string, args ...any) Base {
	b = b.withDefaults()
	b.Logger = b.Logger.With(append([]any{"component", name}, args...)...)
	return b
}

// withDefaults fills a nil Logger (discarding) and a nil Now (time.Now).
func (b Base) withDefaults() Base {
	if b.Logger == nil {
		b.Logger = slog.New(slog.DiscardHandler)
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	return b
}

// Sleep waits for d, or until ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
