package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/webhook"
)

// Each agent's route comes from its kind's row: the stream agents share the stream
// target unbounded, the others get their own target bounded by target.concurrency, with
// the common delivery keys and their defaults; a runtime's follower runs beside it.
func TestTargetRoutes(t *testing.T) {
	cfgs := []agent.Config{
		{ID: "coder", Token: "coder-token-0123456789"},
		{ID: "support", Token: "support-token-0123456789", Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Settings: mastra.Config{URL: "http://127.0.0.1:4111", AgentID: "supportAgent", Headers: map[string]secret.Secret{"Authorization": "Bearer mk-0123456"}}}},
		{ID: "hooks", Token: "hooks-token-0123456789", Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Concurrency: 2, MaxAttempts: 3, Settings: webhook.Config{URL: "https://example.com/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}},
	}
	stream := agent.NewStreamTarget()
	runs := agent.NewRuns(nil, nil, cfgs)
	built, err := (&Config{Agents: cfgs}).buildTargets(targetBuild{runs: runs, notify: func([]inbox.ThreadKey) {}, stream: stream})
	require.NoError(t, err)
	routes, services := built.routes, built.services
	require.Len(t, routes, 3)
	require.Equal(t, agent.TargetStream, routes["coder"].Kind)
	require.Same(t, stream, routes["coder"].Target)
	require.Equal(t, 0, routes["coder"].Concurrency)
	require.IsType(t, &mastra.Target{}, routes["support"].Target)
	require.Equal(t, agent.DefaultConcurrency, routes["support"].Concurrency)
	require.Equal(t, 0, routes["support"].MaxAttempts, "no attempt cap by default: records give up by age")
	require.Equal(t, agent.DefaultMaxAge, routes["support"].MaxAge)
	require.Equal(t, agent.DefaultFailureThreshold, routes["support"].FailureThreshold)
	require.Equal(t, agent.DefaultProbeInterval, routes["support"].ProbeInterval)
	require.IsType(t, &webhook.Target{}, routes["hooks"].Target)
	require.Equal(t, 2, routes["hooks"].Concurrency)
	require.Equal(t, 3, routes["hooks"].MaxAttempts)
	require.Len(t, services, 1)
	require.IsType(t, &mastra.Follower{}, services[0])
}
