package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A tokenless agent has no digest to match, so even a caller that got past the
// empty-bearer check could not become it.
func TestTokenlessAgentHasNoDigest(t *testing.T) {
	s, err := NewService([]Config{
		{ID: "coder", Token: "coder-token-0123456789"},
		{ID: "support", Target: TargetConfig{Kind: "mastra", Presence: PresenceRuntime}},
	}, Deps{})
	require.NoError(t, err)
	require.Equal(t, 1, s.tokens.Len())
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer \t "} {
		_, err := s.Caller(h)
		require.Error(t, err, "header %q", h)
	}
	who, err := s.Caller("Bearer coder-token-0123456789")
	require.NoError(t, err)
	require.Equal(t, "coder", who)
}
