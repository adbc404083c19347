package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// A down target's records are neither claimed nor waited for; its probe slot is taken
// once; a probe time left in the past (an agent no longer configured) never makes the
// dispatcher spin.
func TestTargetDownHoldsItsRecords(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		queue := store.NewQueue(s)
		health := store.NewTargets(s)
		ctx := t.Context()
		ingest(t, svc, "d1", comment("c", "", ""))
		probeAt := t0.Add(30 * time.Second)
		st, down, err := health.TargetFailed(ctx, "coder", t0, 1, probeAt, nil, "HTTP 503")
		require.NoError(t, err)
		require.True(t, down)
		require.Equal(t, delivery.TargetDown, st.State)

		now := t0.Add(time.Hour)
		keys, err := queue.ClaimThreads(ctx, "a", now, now.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, keys, "a down target's threads are not claimed")
		next, err := queue.NextDue(ctx, now)
		require.NoError(t, err)
		require.Nil(t, next, "nothing to wake for: the probe time has passed and the records wait")

		ok, err := health.ClaimProbe(ctx, "coder", now, now.Add(30*time.Second))
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = health.ClaimProbe(ctx, "coder", now, now.Add(30*time.Second))
		require.NoError(t, err)
		require.False(t, ok, "one probe per slot")
		next, err = queue.NextDue(ctx, now)
		require.NoError(t, err)
		require.Equal(t, now.Add(30*time.Second), *next)
		k, found, err := health.ClaimProbeThread(ctx, "coder", "a", now, now.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, "coder", k.Agent)

		up, err := health.TargetSucceeded(ctx, "coder", now)
		require.NoError(t, err)
		require.True(t, up)
		up, err = health.TargetSucceeded(ctx, "coder", now)
		require.NoError(t, err)
		require.False(t, up, "one transition")
	})
}
