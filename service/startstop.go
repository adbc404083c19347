package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrStarted is Start's answer while the goroutines of an earlier Start still run.
var ErrStarted = errors.New("already started")

// StartStop owns a service's goroutines. A service embeds it and its Start calls
// StartStop.Start with its loops; the embedded Stop ends them. Every goroutine runs under
// one context, ended by Stop or by the end of Start's context, and Stop returns once
// every one has returned. Once they all have, the service may be started again.
type StartStop struct {
	mu  sync.Mutex
	run *run // the last start; nil before the first
}

type run struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed once every goroutine of the run returned
}

// Start runs each loop in a goroutine of its own under a context Stop ends. It fails
// with ErrStarted while an earlier start still runs.
func (s *StartStop) Start(ctx context.Context, loops ...func(ctx context.Context)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil && !closed(s.run.done) {
		return ErrStarted
	}
	r := &run{done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(ctx)
	// The run holds one count until its context ends, so Go may add goroutines until
	// then; it is released under mu, where Go checks the context, so no goroutine is
	// added once the count may have reached zero.
	r.wg.Add(1)
	go func() {
		<-r.ctx.Done()
		s.mu.Lock()
		r.wg.Done()
		s.mu.Unlock()
	}()
	for _, loop := range loops {
		r.wg.Go(func() { loop(r.ctx) })
	}
	go func() {
		r.wg.Wait()
		close(r.done)
	}()
	s.run = r
	return nil
}

// Go runs fn in another goroutine of the running start (a stream a service opens
// on demand) and reports false, running nothing, when the service is not running.
func (s *StartStop) Go(fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	if r == nil || r.ctx.Err() != nil {
		return false
	}
	r.wg.Go(func() { fn(r.ctx) })
	return true
}

// Context is the context of the running start; it has ended when the service is
// stopped (or stopping), and is nil before the first Start.
func (s *StartStop) Context() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		return nil
	}
	return s.run.ctx
}

// Running reports whether goroutines of the last start still run.
func (s *StartStop) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run != nil && !closed(s.run.done)
}

// Stopped is closed once every goroutine of the last start returned (at once before
// the first Start).
func (s *StartStop) Stopped() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return s.run.done
}

// Stop ends the goroutines and waits for them, or for ctx. Stopping a service that is
// not running does nothing.
func (s *StartStop) Stop(ctx context.Context) error {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	r.cancel()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the service's goroutines: %w", ctx.Err())
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
