package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// Explain shows the thread's wake budget: allowed while there is room, spent (with the
// time a wake frees) once the window is full, and urgent records waking regardless.
func TestExplainShowsWakeBudget(t *testing.T) {
	budget := &agent.WakeBudget{Max: 1, Per: time.Hour}
	en := newEnv(t, envOpts{wakes: map[string]agent.WakeSettings{"coder": {Budget: budget, Limit: 4}}})
	runs := store.NewRuns(en.st)
	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "initech"}
	explain := func(priority string) *admin.ExplainedWake {
		var x admin.Explanation
		body := map[string]any{"kind": "invoice-failed", "summary": "Invoice 3 failed", "priority": priority,
			"attributes": map[string]any{"customer": "initech"}}
		en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
		require.Len(t, x.Notifications, 1)
		require.NotNil(t, x.Notifications[0].Wake)
		return x.Notifications[0].Wake
	}
	w := explain("medium")
	require.Equal(t, "1/1h", w.Budget)
	require.False(t, w.Spent)
	require.Equal(t, 4, w.MaxConcurrent)
	require.Equal(t, "a wake would be allowed (0 of 1/1h used)", w.Note)

	now := en.clock.Now()
	res, err := runs.WakeRun(context.Background(), agent.Run{ID: "run-1", Thread: k, Origin: agent.OriginWake, OpenedAt: now,
		LeaseUntil: now.Add(time.Minute)}, agent.WakeRequest{Budget: budget, Limit: 4, Since: now})
	require.NoError(t, err)
	require.Equal(t, agent.WakeOpened, res.Outcome)
	_, _, _, err = runs.CloseRun(context.Background(), k, "run-1", agent.RunFinished, "", now)
	require.NoError(t, err)
	en.clock.Advance(10 * time.Minute)

	before := snapshot(t, en)
	w = explain("medium")
	require.True(t, w.Spent)
	require.Equal(t, 1, w.Used)
	require.Equal(t, now.Add(time.Hour), w.FreesAt.UTC())
	require.Contains(t, w.Note, "wake budget 1/1h spent: a wake would be held for the next summary")
	require.Contains(t, explain("urgent").Note, "but an urgent record always wakes")
	require.Equal(t, before, snapshot(t, en), "explain writes nothing")
}
