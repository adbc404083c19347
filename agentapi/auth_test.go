package agentapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// The design's own agents example: a mastra agent (its runtime reports its runs) needs
// no token; stream and webhook agents, which drive runs through the agent API, do.
func TestConfigTokenByTargetKind(t *testing.T) {
	mastra := agent.TargetConfig{Kind: "mastra", Presence: agent.PresenceRuntime}
	webhook := agent.TargetConfig{Kind: "webhook", Presence: agent.PresenceRuns}
	require.NoError(t, agent.Config{ID: "support", Target: mastra}.Validate())
	require.NoError(t, agent.Config{ID: "support", Token: "support-token-0123456789", Target: mastra}.Validate())
	require.ErrorContains(t, agent.Config{ID: "support", Token: "short", Target: mastra}.Validate(), "at least 12")
	require.ErrorContains(t, agent.Config{ID: "coder"}.Validate(), "token: required")
	require.ErrorContains(t, agent.Config{ID: "coder", Target: agent.TargetConfig{Kind: agent.TargetStream}}.Validate(), "token: required")
	require.ErrorContains(t, agent.Config{ID: "hook", Target: webhook}.Validate(), "token: required")
	require.NoError(t, agent.Config{ID: "hook", Token: "hook-token-0123456789", Target: webhook}.Validate())
}

// An agent configured without a token can never be authenticated: no header, an empty
// or blank bearer, or any token at all gets 401 on its threads.
func TestAuthAgentWithoutToken(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{
		{ID: "coder", Token: deliverytest.CoderToken},
		{ID: "support", Target: agent.TargetConfig{Kind: "mastra", Presence: agent.PresenceRuntime}},
	}})
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	for _, header := range []string{"", "Bearer", "Bearer ", "Bearer  ", "Bearer \t", "bearer ", `Bearer ""`, "Bearer x"} {
		for _, path := range []string{"/notifications", "/runs"} {
			method := http.MethodGet
			if path == "/runs" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, e.ThreadURL(k, path), nil)
			require.NoError(t, err)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "header %q on %s", header, path)
		}
	}
	var out apiError
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications"), deliverytest.CoderToken, nil, &out),
		"another agent's token does not reach it either")
	live, err := e.Runs.Live(t.Context(), k)
	require.NoError(t, err)
	require.Nil(t, live, "no run was opened")
}
