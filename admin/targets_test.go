package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/store"
)

func TestTargets(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		// Two billing invoices for coder: its backlog once due.
		health := store.NewTargets(en.st)
		en.deliver("evt_t1", invoice("acme", "first"))
		en.deliver("evt_t2", invoice("globex", "second"))
		now := en.clock.Now()
		var list struct {
			Targets []admin.TargetStatus `json:"targets"`
		}
		en.call(http.MethodGet, "/admin/v1/targets", nil, &list)
		require.Len(t, list.Targets, 2)
		require.Equal(t, admin.TargetStatus{Agent: "coder", State: "up", Backlog: 2}, list.Targets[0])
		require.Equal(t, admin.TargetStatus{Agent: "support", State: "up"}, list.Targets[1])

		// Failures below the threshold keep it up (since an unknown time); at the
		// threshold it is down.
		probe := now.Add(30 * time.Second)
		_, _, err := health.TargetFailed(t.Context(), "coder", now, 5, probe, nil, "timed out")
		require.NoError(t, err)
		en.call(http.MethodGet, "/admin/v1/targets", nil, &list)
		require.Equal(t, admin.TargetStatus{Agent: "coder", State: "up", Failures: 1, LastError: "timed out", LastErrorAt: &now,
			Backlog: 2}, list.Targets[0])
		for i := 1; i < 5; i++ {
			_, down, err := health.TargetFailed(t.Context(), "coder", now, 5, probe, nil, "POST https://agent.example/hook: HTTP 503")
			require.NoError(t, err)
			require.Equal(t, i == 4, down, "failure %d", i+1)
		}
		en.call(http.MethodGet, "/admin/v1/targets", nil, &list)
		got := list.Targets[0]
		require.Equal(t, "down", got.State)
		require.Equal(t, now, *got.Since)
		require.Equal(t, 5, got.Failures)
		require.Equal(t, "POST https://agent.example/hook: HTTP 503", got.LastError)
		require.Equal(t, probe, *got.NextProbeAt)
		require.Equal(t, 2, got.Backlog)

		code, raw := en.do(http.MethodGet, "/admin/v1/targets?agent=coder", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code, string(raw))
	})
}
