package gateway

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// CrashLongEnv runs the long form of the crash test (at least 10 SIGKILLs per backend).
const CrashLongEnv = "SIGNALGATE_CRASH_LONG"

// TestCrashSafety drives load into a gateway process and SIGKILLs it at random moments,
// restarting it on the same data each time, then checks: every event answered 2xx is
// stored; every record ends delivered and none is left pending behind a lapsed lease;
// the stream subscriber of every thread got every signal id of its log at least once
// (resuming with Last-Event-ID across restarts), never one twice, and no signal id ever
// had two different contents.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts gateway processes")
	}
	kills, events := 3, 800
	if os.Getenv(CrashLongEnv) == "1" {
		kills, events = 12, 6000
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { crashRun(t, b.Config, kills, events) })
	}
}

func crashRun(t *testing.T, st store.Config, kills, events int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kills, %d events", seed, kills, events)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	const lease = 2 * time.Second
	sc := load.DefaultScenario()
	cfg := writeScenarioConfig(t, t.TempDir(), freePort(t), st, sc, lease)
	first := startGateway(t, cfg)

	// Kill moments: random acknowledgement counts, so kills land wherever the load is.
	at := make([]int, kills)
	for i := range at {
		at[i] = events/20 + rng.IntN(events*17/20)
	}
	slices.Sort(at)
	killNow := make(chan struct{}, kills)
	var (
		mu      sync.Mutex
		next    int
		current = first
		errs    []error
		killed  int
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range killNow {
			mu.Lock()
			p := current
			mu.Unlock()
			p.kill()
			np, err := launchGateway(t, cfg)
			mu.Lock()
			killed++
			if err != nil {
				errs = append(errs, err)
			} else {
				current = np
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()

	res, err := load.Run(context.Background(), load.Config{
		Scenario: sc, URLs: []string{first.url}, Threads: 40, Events: events, Clients: 8,
		// Failed deliveries are resent with the same delivery id, as providers do, for
		// long enough to span a restart.
		Retries: 100, Drain: 60 * time.Second, Busy: 0.1, BusyHold: 200 * time.Millisecond, KeepSeen: true,
		OnAck: func(n int) {
			mu.Lock()
			defer mu.Unlock()
			for next < len(at) && n >= at[next] {
				next++
				killNow <- struct{}{}
			}
		},
	})
	close(killNow)
	<-done
	require.NoError(t, err)
	mu.Lock()
	require.Empty(t, errs, "restart failed")
	require.Equal(t, kills, killed)
	mu.Unlock()
	t.Logf("%d acked of %d sent, %d retried, %.0f req/s, e2e p99 %.1f ms, stream reconnects %d",
		res.Acked, res.Sent, res.Retried, res.ReqPerSec, res.EndToEnd.P99, res.Reconnects)

	require.Equal(t, events, res.Acked, "every event is eventually acknowledged; answers: %v", res.Status)
	require.Zero(t, res.Lost, "acknowledged but never streamed: %v", res.LostExamples)
	require.Zero(t, res.Duplicated, "one event in two signals")
	require.Zero(t, res.DupFrames, "a subscriber got a signal id twice")
	require.Zero(t, res.Conflicting, "a signal id with two contents")

	db := openDB(t, st)
	var c logCheck
	deadline := time.Now().Add(procWait)
	for {
		// Records of events stored just before a kill but never acknowledged finish too.
		c = checkLog(t, db, lease)
		if c.notTerminal == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the database of another process
	}
	require.Zero(t, c.notTerminal, "records still pending")
	require.Zero(t, c.stuck, "records stuck behind a lapsed lease")
	require.Zero(t, c.leased, "threads leased past their lease with due work")
	for _, d := range res.AckedDeliveries {
		require.True(t, c.events[d], "acknowledged delivery %s is stored", d)
	}
	for m, ids := range c.markers {
		require.Len(t, ids, 1, "event %s became one signal", m)
	}
	for k, seen := range res.Seen {
		for id := range c.signals[k] {
			if !seen[id] {
				// Signals of events stored but never acknowledged can land after the drain.
				require.False(t, res.AckedMarkers[markerRE.FindString(c.contents[id])], "subscriber of %s missed signal %s", k, id)
			}
		}
	}
}
