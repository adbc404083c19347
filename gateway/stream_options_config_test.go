package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/targets/mastra"
)

// agents[].target.stream_options and policy.rules[].stream_options are JSON objects
// passed through to a Mastra server; only a mastra target takes the former, and what
// cannot be sent as JSON is named by its key path.
func TestStreamOptionsConfig(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte(`
agents:
  - id: coder
    target: { kind: mastra, url: "http://localhost:4111", agent_id: coder,
              stream_options: { requestContext: { model: fast }, maxSteps: 5 } }
policy:
  rules:
    - match: { source: github }
      action: deliver
      stream_options: { requestContext: { model: careful } }
`), noEnv)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"requestContext": map[string]any{"model": "fast"}, "maxSteps": 5}, cfg.Agents[0].Target.Settings.(mastra.Config).StreamOptions)
	require.Equal(t, map[string]any{"requestContext": map[string]any{"model": "careful"}}, cfg.Policy.Rules[0].StreamOptions)

	got := problems(t, `
agents:
  - id: hooks
    token: hooks-token-0123456789
    target: { kind: stream, stream_options: { maxSteps: 5 } }
  - id: coder
    target: { kind: mastra, url: "http://localhost:4111", agent_id: coder, stream_options: { requestContext: { 1: one } } }
policy:
  rules:
    - action: deliver
      stream_options: { requestContext: { 2: two } }
`, noEnv)
	require.Len(t, got, 3, got)
	require.Contains(t, got[0], "agents[0].target.stream_options: only a mastra target takes this key (kind is stream")
	require.Contains(t, got[1], "agents[1].target.stream_options: not a JSON object")
	require.Contains(t, got[2], "policy.rules[0].stream_options: not a JSON object")
}
