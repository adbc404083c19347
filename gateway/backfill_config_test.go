package gateway

import (
	"net/http"
	"net/http/httptest"
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

// A served GitHub connector with backfill reads its hook's deliveries at start.
func TestGitHubBackfillRunsAtStart(t *testing.T) {
	listed := make(chan string, 10)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		listed <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(api.Close)
	startMain(t, `
connectors:
  github:
    - name: acme
      secret: 0123456789abcdef0123
      token: ghp_backfill-token
      api_url: `+api.URL+`
      backfill: { hooks: [ "acme/api:12" ] }
`)
	select {
	case got := <-listed:
		require.Equal(t, "GET /repos/acme/api/hooks/12/deliveries Bearer ghp_backfill-token", got)
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("the backfill did not read the hook at start")
	}
}
