package mastra

import "github.com/signalgate/signalgate/agent"

// AgentURL is the Mastra agent resource GET /api/agents/{id} (which `check --connect`
// asks) under the server's base URL.
func AgentURL(base, agentID string) string {
	return agentBase(agent.TargetConfig{URL: base, AgentID: agentID})
}
