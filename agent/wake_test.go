package agent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
)

func TestWakeBudgetSlidingWindow(t *testing.T) {
	b := agent.WakeBudget{Max: 3, Per: time.Hour}
	require.Equal(t, "3/1h", b.String())
	require.Equal(t, "2/1h30m", agent.WakeBudget{Max: 2, Per: 90 * time.Minute}.String())
	require.Equal(t, "1/45s", agent.WakeBudget{Max: 1, Per: 45 * time.Second}.String())
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	wakes := []time.Time{t0, t0.Add(10 * time.Minute), t0.Add(20 * time.Minute)}
	spent, frees := b.Spent(wakes[:2], t0.Add(30*time.Minute))
	require.False(t, spent)
	require.True(t, frees.IsZero())
	spent, frees = b.Spent(wakes, t0.Add(30*time.Minute))
	require.True(t, spent)
	require.Equal(t, t0.Add(time.Hour), frees, "the oldest wake of the window leaves it first")
	// At exactly an hour after the first wake it has left the window.
	spent, _ = b.Spent(wakes, t0.Add(time.Hour))
	require.False(t, spent)
	require.Len(t, agent.InWindow(wakes, t0.Add(time.Hour+15*time.Minute), time.Hour), 1)
}
