package mastra_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// A follower started after a run suspended (a gateway restart) learns the suspension
// from Mastra's GET /agents/:agentId/suspended-runs: the approvals are reconciled with
// the call that needs approval, which no stream chunk told this follower of.
func TestRealMastraReconcilesSuspendedRuns(t *testing.T) {
	base := mastraServer(t, 200*time.Millisecond)
	cfg := agent.Config{ID: "support", Token: deliverytest.SupportToken,
		Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 20 * time.Second, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	var before *mastra.Follower
	env := deliverytest.New(t, deliverytest.Config{Recovery: kept, RealClock: true, Agents: []agent.Config{cfg},
		EnvRoutes: func(e *deliverytest.Env) map[string]delivery.Route {
			before = mastra.NewFollower(cfg, e.Runs, e.Notify, service.Base{}, mastra.WithBackoff(50*time.Millisecond, time.Second))
			before.TestSignals.Chunk.Init()
			tg, err := mastra.New(cfg, mastra.WithFollower(before))
			require.NoError(t, err)
			return map[string]delivery.Route{"support": {Kind: mastra.Kind, Target: tg, Concurrency: 4}}
		}})
	ctx := context.Background()
	require.NoError(t, before.Start(ctx))
	require.NoError(t, env.Dispatcher.Start(ctx))
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "reconcile"}
	env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "deploy", Priority: inbox.PriorityUrgent, Summary: "deploy needs-approval"})
	waitFor(t, before, k, "tool-call-approval")
	require.NoError(t, before.Stop(ctx))

	hook := &hookCalls{}
	after := mastra.NewFollower(cfg, env.Runs, env.Notify, service.Base{}, mastra.WithApprovals(hook))
	after.TestSignals.Reconciled.Init()
	require.NoError(t, after.Start(ctx))
	t.Cleanup(func() { _ = after.Stop(context.Background()) })
	select {
	case n := <-after.TestSignals.Reconciled.C():
		require.GreaterOrEqual(t, n, 1)
	case <-time.After(30 * time.Second):
		t.Fatal("never reconciled")
	}
	call := toolCallOf(t, base, k)
	hook.mu.Lock()
	defer hook.mu.Unlock()
	var found bool
	for _, c := range hook.calls {
		if strings.HasPrefix(c, "suspended "+k.String()+" ") && strings.HasSuffix(c, " "+call+" deploy true") {
			found = true
		}
	}
	require.True(t, found, "%v", hook.calls)
}
