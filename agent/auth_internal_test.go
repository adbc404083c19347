package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A tokenless agent has no digest to match, so even a caller that got past the
// empty-bearer check could not become it.
func TestTokenlessAgentHasNoDigest(t *testing.T) {
	a, err := NewAPI([]Config{
		{ID: "coder", Token: "coder-token-0123456789"},
		{ID: "support", Target: TargetConfig{Kind: TargetMastra, URL: "http://127.0.0.1:4111", AgentID: "supportAgent"}},
	}, Deps{})
	require.NoError(t, err)
	require.Len(t, a.tokens, 1)
	require.Equal(t, "coder", a.tokens[0].agent)
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer \t "} {
		_, ok := a.caller(h)
		require.False(t, ok, "header %q", h)
	}
	who, ok := a.caller("Bearer coder-token-0123456789")
	require.True(t, ok)
	require.Equal(t, "coder", who)
}
