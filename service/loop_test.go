package service_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/service"
)

// step is what the scripted pass of a test loop answers.
type step struct {
	n    int
	more bool
	err  error
}

// scripted is a loop whose passes answer what the test sends on steps and whose waits
// the test ends through tick, after reading the duration asked on waits.
type scripted struct {
	steps chan step
	waits chan time.Duration
	tick  chan struct{}
	due   chan dueAnswer
	log   *syncBuffer
}

type dueAnswer struct {
	at  *time.Time
	err error
}

func newScripted() *scripted {
	return &scripted{steps: make(chan step), waits: make(chan time.Duration), tick: make(chan struct{}),
		due: make(chan dueAnswer), log: &syncBuffer{}}
}

func (s *scripted) loop(now time.Time) service.Loop[int] {
	return service.Loop[int]{
		Base: service.Base{Logger: slog.New(slog.NewTextHandler(s.log, nil)), Now: func() time.Time { return now }},
		Pass: func(ctx context.Context) (int, bool, error) {
			select {
			case st := <-s.steps:
				return st.n, st.more, st.err
			case <-ctx.Done():
				return 0, false, ctx.Err()
			}
		},
		Failed: "test pass failed",
		Wait: func(ctx context.Context, d time.Duration) bool {
			select {
			case s.waits <- d:
			case <-ctx.Done():
				return false
			}
			select {
			case <-s.tick:
				return true
			case <-ctx.Done():
				return false
			}
		},
	}
}

func (s *scripted) wait(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-s.waits:
		return d
	case <-time.After(hangGuard):
		t.Fatal("the loop did not wait")
	}
	return 0
}

func next[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatal(what)
	}
	var zero T
	return zero
}

// TestLoopDrainsThenWaitsForTheNextDueTime: a pass that left work waiting is followed at
// once by the next; one that did not waits until the next due time, Interval at most.
func TestLoopDrainsThenWaitsForTheNextDueTime(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s := newScripted()
	loop := s.loop(now)
	var sig service.Signal[int]
	sig.Init()
	loop.Signal = &sig
	loop.Interval, loop.ErrorWait = time.Minute, 5*time.Second
	asked := 0
	loop.NextDue = func(context.Context) (*time.Time, error) {
		asked++
		a := <-s.due
		return a.at, a.err
	}
	var ss service.StartStop
	require.NoError(t, ss.Start(t.Context(), loop.Run))
	t.Cleanup(func() { require.NoError(t, ss.Stop(context.Background())) })

	s.steps <- step{n: 1, more: true}
	s.steps <- step{n: 2, more: true} // taken at once: no wait between
	s.steps <- step{n: 3}
	in5s := now.Add(5 * time.Second)
	s.due <- dueAnswer{at: &in5s}
	require.Equal(t, 5*time.Second, s.wait(t), "until the next due time")
	require.Equal(t, []int{1, 2, 3}, []int{next(t, sig.C(), "pass"), next(t, sig.C(), "pass"), next(t, sig.C(), "pass")})
	require.Equal(t, 1, asked, "NextDue is asked once nothing is waiting, not while draining")

	s.tick <- struct{}{}
	s.steps <- step{n: 4}
	s.due <- dueAnswer{}
	require.Equal(t, time.Minute, s.wait(t), "nothing due: the poll interval")

	s.tick <- struct{}{}
	s.steps <- step{n: 5}
	in2h := now.Add(2 * time.Hour)
	s.due <- dueAnswer{at: &in2h}
	require.Equal(t, time.Minute, s.wait(t), "due after the poll interval: the poll interval")

	s.tick <- struct{}{}
	s.steps <- step{n: 6}
	past := now.Add(-time.Hour)
	s.due <- dueAnswer{at: &past}
	require.Equal(t, time.Duration(0), s.wait(t), "due already: no wait")

	s.tick <- struct{}{}
	s.steps <- step{n: 7}
	s.due <- dueAnswer{err: errors.New("database gone")}
	require.Equal(t, 5*time.Second, s.wait(t), "NextDue failed: the error wait")
	require.Contains(t, s.log.String(), `msg="read next due time" error="database gone"`)
}

// TestLoopFailedPass: a failed pass is logged and signalled, never drained, and waits
// ErrorWait (Interval when unset).
func TestLoopFailedPass(t *testing.T) {
	for _, tc := range []struct {
		name      string
		errorWait time.Duration
		want      time.Duration
	}{
		{"error wait", 5 * time.Second, 5 * time.Second},
		{"interval", 0, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted()
			loop := s.loop(time.Now())
			var sig service.Signal[int]
			sig.Init()
			loop.Signal = &sig
			loop.Interval, loop.ErrorWait = time.Minute, tc.errorWait
			loop.NextDue = func(context.Context) (*time.Time, error) {
				t.Error("NextDue asked after a failed pass")
				return nil, nil
			}
			var ss service.StartStop
			require.NoError(t, ss.Start(t.Context(), loop.Run))
			t.Cleanup(func() { require.NoError(t, ss.Stop(context.Background())) })

			s.steps <- step{n: 1, more: true, err: errors.New("disk full")}
			require.Equal(t, tc.want, s.wait(t), "a failed pass is not drained")
			require.Equal(t, 1, next(t, sig.C(), "pass"))
			require.Contains(t, s.log.String(), `msg="test pass failed" error="disk full"`)
		})
	}
}

// TestLoopFailureLoggedByThePass: without Failed the loop logs nothing; the pass did.
func TestLoopFailureLoggedByThePass(t *testing.T) {
	s := newScripted()
	loop := s.loop(time.Now())
	loop.Failed, loop.Interval = "", time.Minute
	var ss service.StartStop
	require.NoError(t, ss.Start(t.Context(), loop.Run))
	t.Cleanup(func() { require.NoError(t, ss.Stop(context.Background())) })
	s.steps <- step{err: errors.New("disk full")}
	require.Equal(t, time.Minute, s.wait(t))
	require.Empty(t, s.log.String())
}

// TestLoopWaitFirst: a loop whose service ran a pass in Start waits before its first.
func TestLoopWaitFirst(t *testing.T) {
	s := newScripted()
	loop := s.loop(time.Now())
	loop.Interval, loop.WaitFirst = time.Minute, true
	var ss service.StartStop
	require.NoError(t, ss.Start(t.Context(), loop.Run))
	t.Cleanup(func() { require.NoError(t, ss.Stop(context.Background())) })
	require.Equal(t, time.Minute, s.wait(t), "a wait before any pass")
	s.tick <- struct{}{}
	s.steps <- step{}
	require.Equal(t, time.Minute, s.wait(t))
}

// TestLoopKick: with the loop's own timer, a kick ends the sleep long before Interval;
// kicks coalesce and never block.
func TestLoopKick(t *testing.T) {
	kick := service.NewKick()
	kick.Kick()
	kick.Kick() // a second one waiting is the same wake-up
	passes := make(chan int, 8)
	n := 0
	loop := service.Loop[int]{
		Pass: func(context.Context) (int, bool, error) {
			n++
			passes <- n
			return n, false, nil
		},
		Kick:     kick.C(),
		Interval: time.Hour,
	}
	var ss service.StartStop
	require.NoError(t, ss.Start(t.Context(), loop.Run))
	t.Cleanup(func() { require.NoError(t, ss.Stop(context.Background())) })
	require.Equal(t, 1, next(t, passes, "no first pass"))
	require.Equal(t, 2, next(t, passes, "the waiting kick did not run a pass"))
	kick.Kick()
	require.Equal(t, 3, next(t, passes, "a kick did not end the hour's sleep"))
}

// TestLoopStopCutsAPassShort: a pass that returns because the service stopped is
// neither logged nor signalled, and the loop ends.
func TestLoopStopCutsAPassShort(t *testing.T) {
	s := newScripted()
	loop := s.loop(time.Now())
	var sig service.Signal[int]
	sig.Init()
	loop.Signal = &sig
	entered := make(chan struct{})
	pass := loop.Pass
	loop.Pass = func(ctx context.Context) (int, bool, error) {
		close(entered)
		return pass(ctx)
	}
	var ss service.StartStop
	require.NoError(t, ss.Start(context.Background(), loop.Run))
	next(t, entered, "no pass")
	require.NoError(t, ss.Stop(context.Background()))
	select {
	case p := <-sig.C():
		t.Fatalf("a pass cut short was signalled: %d", p)
	default:
	}
	require.Empty(t, s.log.String())
}

// syncBuffer is a log sink the loop's goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
