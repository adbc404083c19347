package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
)

// agents[].target.reply: auto is for mastra targets only (other agents post replies
// through the agent API); an unknown mode is named.
func TestAutoReplyConfig(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte(`
agents:
  - id: coder
    target: { kind: mastra, url: "http://localhost:4111", agent_id: coder, reply: auto }
`), noEnv)
	require.NoError(t, err)
	require.Equal(t, agent.ReplyAuto, cfg.Agents[0].Target.Reply)

	got := problems(t, `
agents:
  - id: hooks
    token: hooks-token-0123456789
    target: { kind: stream, reply: auto }
  - id: coder
    target: { kind: mastra, url: "http://localhost:4111", agent_id: coder, reply: always }
`, noEnv)
	require.Len(t, got, 2, got)
	require.Contains(t, got[0], "agents[0].target.reply: only a mastra, langgraph, a2a, openai-agents or claude-agents target answers by itself (kind is stream)")
	require.Contains(t, got[1], `agents[1].target.reply: "always" is not one of auto, none`)
}
