package targets_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/webhook"
)

func TestRoutes(t *testing.T) {
	cfgs := []agent.Config{
		{ID: "coder", Token: "coder-token-0123456789"},
		{ID: "support", Token: "support-token-0123456789", Target: agent.TargetConfig{Kind: agent.TargetMastra,
			URL: "http://127.0.0.1:4111", AgentID: "supportAgent", Headers: map[string]secret.Secret{"Authorization": "Bearer mk-0123456"}}},
		{ID: "hooks", Token: "hooks-token-0123456789", Target: agent.TargetConfig{Kind: agent.TargetWebhook,
			URL: "https://example.com/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Concurrency: 2, MaxAttempts: 3}},
	}
	stream := agent.NewStreamTarget()
	runs := agent.NewRuns(nil, nil, cfgs)
	routes, services, err := targets.Routes(cfgs, runs, stream, func([]inbox.ThreadKey) {}, nil, nil)
	require.NoError(t, err)
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
