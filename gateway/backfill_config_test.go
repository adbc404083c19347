package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/github"
)

// A GitHub connector's backfill block reads with its defaults; one that cannot work
// is refused naming its keys.
func TestGitHubBackfillConfig(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
agents: [ { id: a, token: dev-only-coder-token } ]
connectors:
  github:
    - name: acme
      secret: 0123456789abcdef0123
      token: ghp_x
      backfill: { hooks: [ "acme/api:12" ], interval: 10m }
`), noEnv)
	require.NoError(t, err)
	gh := entries[github.Config](cfg.Connectors, github.Source)
	require.Len(t, gh, 1)
	require.Equal(t, &github.BackfillConfig{Hooks: []string{"acme/api:12"}, Interval: 10 * time.Minute,
		Window: github.MaxBackfillWindow, MaxRequests: github.DefaultBackfillRequests}, gh[0].Backfill)

	got := problems(t, `
agents: [ { id: a, token: dev-only-coder-token } ]
connectors:
  github:
    - name: acme
      secret: 0123456789abcdef0123
      backfill: { hooks: [ "acme/api" ], window: 100h }
`, noEnv)
	require.Contains(t, got, "connectors.github[0].backfill: needs token or app (deliveries are read from GitHub's API with the connector's credentials)")
	require.Contains(t, got, `connectors.github[0].backfill.hooks[0]: want owner/repo:HOOK_ID or org:HOOK_ID (a positive number), got "acme/api"`)
	require.Contains(t, got, "connectors.github[0].backfill.window: between 0 and 72h0m0s (GitHub keeps deliveries 3 days), got 100h0m0s")
}
