package gateway

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/store/storetest"
)

// TestScaleOutThreeReplicas runs three gateway processes on one PostgreSQL, sends load to
// all of them round-robin while every thread's stream is followed (streams spread over
// the replicas too), SIGKILLs one replica mid-way, and checks that nothing is lost or
// delivered twice: every acknowledged event is stored once and carried by exactly one
// signal, and every subscriber got each signal once.
func TestScaleOutThreeReplicas(t *testing.T) {
	dsn := os.Getenv(storetest.PostgresEnv)
	if dsn == "" {
		t.Skip(storetest.PostgresEnv + " not set")
	}
	if testing.Short() {
		t.Skip("starts three gateway processes")
	}
	st := storetest.PostgresConfig(t, dsn)
	sc := load.DefaultScenario()
	const lease = 2 * time.Second
	dir := t.TempDir()

	procs := make([]*gatewayProc, 3)
	urls := make([]string, len(procs))
	for i := range procs {
		procs[i] = startGateway(t, writeScenarioConfig(t, dir, freePort(t), st, sc, lease))
		urls[i] = procs[i].url
	}

	const events, killAt = 3000, 1000
	var once sync.Once
	res, err := load.Run(context.Background(), load.Config{
		Scenario: sc, URLs: urls, Threads: 60, Events: events, Clients: 12, Retries: 5,
		// Shorter than the streams' 25s keep-alive, after which a stream rereads the log
		// anyway: only cross-replica wake-ups deliver in time.
		Drain: 15 * time.Second, Busy: 0.2, BusyHold: 200 * time.Millisecond,
		OnAck: func(n int) {
			if n >= killAt {
				once.Do(func() { go procs[1].kill() })
			}
		},
	})
	require.NoError(t, err)
	t.Logf("3 replicas: %d acked of %d, %.0f req/s, ingest p99 %.1f ms, e2e p50 %.1f ms p99 %.1f ms, reconnects %d, statuses %v",
		res.Acked, res.Sent, res.ReqPerSec, res.Ingest.P99, res.EndToEnd.P50, res.EndToEnd.P99, res.Reconnects, res.Status)
	require.Equal(t, events, res.Acked, "every event is acknowledged by some replica (retries go to the next one)")
	require.Zero(t, res.Lost, "lost: %v", res.LostExamples)
	require.Zero(t, res.Duplicated, "a marker in two signals")
	require.Zero(t, res.DupFrames, "a subscriber got a signal twice")
	require.Zero(t, res.Conflicting)

	c := checkLog(t, openDB(t, st), lease)
	for _, d := range res.AckedDeliveries {
		require.True(t, c.events[d], "acknowledged delivery %s is stored", d)
	}
	for m, ids := range c.markers {
		require.Len(t, ids, 1, "marker %s is carried by one signal", m)
	}
	require.Len(t, c.markers, events, "one signal per event")
	require.Zero(t, c.notTerminal, "every record delivered")
}
