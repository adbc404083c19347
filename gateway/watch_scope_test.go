package gateway

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/watch"
)

const watchScopeConfig = `
agents:
  - id: coder
    token: coder-token-0123456789
    target: { kind: stream }
    watch_connectors: [slack/team]
  - id: triage
    token: triage-token-0123456789
    target: { kind: stream }
connectors:
  github:
    - { name: main, secret: main-secret-0123456789, watch_repositories: true }
    - { name: other, secret: other-secret-0123456789 }
  slack:
    - { name: team, signing_secret: team-signing-secret-0123 }
routes:
  - name: ci
    match: { source: github, connector: main }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
  - name: any-agent
    match: { source: github, connector: other }
    thread: { agent: "{{.Extra.agent}}", resource: r, thread: t }
`

// An agent may watch the connectors its routes feed it from and those watch_connectors
// names; a route whose agent is a template grants no one.
func TestWatchScopeFromConfig(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte(watchScopeConfig), noEnv)
	require.NoError(t, err)
	s := cfg.watchScope(build{repos: seenRepos{"main/acme/api": true}})
	require.Equal(t, []string{"main"}, s.Connectors("coder", "github"))
	require.Equal(t, []string{"team"}, s.Connectors("coder", "slack"))
	require.Empty(t, s.Connectors("triage", "github"))
	require.Empty(t, s.Connectors("nobody", "github"))
	// The GitHub row's rule: watch_repositories allows a whole repository, and only one
	// the connector receives events for; Slack's row has none.
	ctx := context.Background()
	require.NoError(t, s.Admit(ctx, "github", "main", watch.Resource{Canonical: "acme/api", Whole: true}))
	require.ErrorIs(t, s.Admit(ctx, "github", "other", watch.Resource{Canonical: "acme/api", Whole: true}), watch.ErrInvalid)
	require.ErrorIs(t, s.Admit(ctx, "github", "main", watch.Resource{Canonical: "evil/x#1"}), watch.ErrUnknown)
	require.NoError(t, s.Admit(ctx, "slack", "team", watch.Resource{Canonical: "C1"}))
}

func TestWatchConnectorsMustBeConfigured(t *testing.T) {
	got := problems(t, `
agents:
  - id: coder
    token: coder-token-0123456789
    target: { kind: stream }
    watch_connectors: [github/missing, main]
connectors:
  github:
    - { name: main, secret: main-secret-0123456789 }
`, noEnv)
	require.Len(t, got, 2, got)
	require.Contains(t, got[0], `agents[0].watch_connectors[0]: "github/missing" is not a configured connector`)
	require.Contains(t, got[1], `agents[0].watch_connectors[1]: "main" is not a configured connector (want source/name`)
}

func TestWatchesConfigValidated(t *testing.T) {
	got := problems(t, `
watches: { default_ttl: 48h, max_ttl: 24h, max_per_agent: -1 }
`, noEnv)
	require.Contains(t, got, "watches.max_ttl: at least default_ttl")
	require.Contains(t, got, "watches.max_per_agent: at least 1")
}

type seenRepos map[string]bool

func (s seenRepos) RepoSeen(_ context.Context, connector, repo string) (bool, error) {
	return s[connector+"/"+repo], nil
}
