package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/service"
)

// hangGuard only bounds a test that would otherwise hang; no assertion depends on it.
const hangGuard = 10 * time.Second

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatal(what)
	}
}

func TestStartStopOwnsItsGoroutines(t *testing.T) {
	var s service.StartStop
	require.NoError(t, s.Stop(t.Context()), "stopping a service never started does nothing")
	entered, left := make(chan struct{}), make(chan struct{})
	require.NoError(t, s.Start(context.Background(), func(ctx context.Context) {
		close(entered)
		<-ctx.Done()
		close(left)
	}))
	require.ErrorIs(t, s.Start(context.Background()), service.ErrStarted)
	wait(t, entered, "the loop did not run")
	require.True(t, s.Running())

	extra := make(chan struct{})
	require.True(t, s.Go(func(ctx context.Context) { <-ctx.Done(); close(extra) }))
	require.NoError(t, s.Stop(context.Background()))
	// Stop returned: every goroutine did, so these are closed already.
	require.True(t, isClosed(left), "Stop waited for the loop")
	require.True(t, isClosed(extra), "Stop waited for the goroutine Go added")
	require.False(t, s.Running())
	require.False(t, s.Go(func(context.Context) {}), "nothing runs once stopped")
	require.NoError(t, s.Stop(context.Background()), "stopping twice is fine")
	require.Error(t, s.Context().Err())

	require.NoError(t, s.Start(context.Background()), "a stopped service starts again")
	require.NoError(t, s.Stop(context.Background()))
}

func TestStartStopEndsWithStartContext(t *testing.T) {
	var s service.StartStop
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, s.Start(ctx, func(ctx context.Context) { <-ctx.Done() }))
	cancel()
	wait(t, s.Stopped(), "the goroutines did not end with Start's context")
	require.False(t, s.Running())
	require.NoError(t, s.Start(context.Background()), "and it starts again")
	require.NoError(t, s.Stop(context.Background()))
}

func TestStopGivesUpWithItsContext(t *testing.T) {
	var s service.StartStop
	release := make(chan struct{})
	require.NoError(t, s.Start(context.Background(), func(context.Context) { <-release }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Stop(ctx), context.Canceled)
	require.ErrorIs(t, s.Start(context.Background()), service.ErrStarted, "still running")
	close(release)
	require.NoError(t, s.Stop(context.Background()))
}

func TestSignal(t *testing.T) {
	var off service.Signal[int]
	off.Signal(1) // the zero value does nothing and never blocks
	require.Nil(t, off.C())

	var on service.Signal[int]
	on.Init()
	on.Signal(1)
	on.Signal(2)
	require.Equal(t, 1, <-on.C())
	require.Equal(t, 2, <-on.C())
}

func TestComponentDefaults(t *testing.T) {
	b := service.Base{}.Component("x")
	require.NotNil(t, b.Logger)
	require.NotNil(t, b.Now)
	require.False(t, b.Logger.Enabled(context.Background(), 12), "a nil logger discards")
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
