package gateway

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDevOnlyTokensOnlyOnLoopback(t *testing.T) {
	cfg := func(listen string) string {
		return `
server: { listen: "` + listen + `" }
admin: { tokens: [ { name: ops, token: dev-only-admin-token-change-me, scopes: [read] } ] }
agents: [ { id: coder, token: dev-only-coder-token } ]
`
	}
	for _, listen := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.2:1"} {
		_, err := ParseConfig("t.yaml", []byte(cfg(listen)), noEnv)
		require.NoError(t, err, listen)
	}
	for _, listen := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "10.0.0.5:8080", "gateway.example:8080"} {
		got := problems(t, cfg(listen), noEnv)
		require.Len(t, got, 2, listen)
		require.True(t, strings.HasPrefix(got[0], "admin.tokens[0].token: "), got[0])
		require.Contains(t, got[0], "server.listen "+listen+" is not a loopback address")
		require.True(t, strings.HasPrefix(got[1], "agents[0].token: "), got[1])
	}
	// Tokens of one's own are fine anywhere.
	_, err := ParseConfig("t.yaml", []byte(`
server: { listen: "0.0.0.0:8080" }
admin: { tokens: [ { name: ops, token: ops-7f3c9a1e5b2d4c6a, scopes: [read] } ] }
agents: [ { id: coder, token: coder-2b8e4f6a1c3d } ]
`), noEnv)
	require.NoError(t, err)
}

// A token shared by two callers would let one act as the other: the admin token as an
// agent, or one agent as another.
func TestDuplicateTokensRefused(t *testing.T) {
	got := problems(t, `
admin:
  tokens:
    - { name: ops, token: shared-token-0123456789, scopes: [read, write] }
    - { name: ro, token: reader-token-0123456789, scopes: [read] }
agents:
  - { id: coder, token: shared-token-0123456789 }
  - { id: support, token: support-token-0123 }
  - { id: triage, token: support-token-0123 }
`, noEnv)
	require.Equal(t, []string{
		"agents[0].token: same value as admin.tokens[0].token (each token must name one caller)",
		"agents[2].token: same value as agents[1].token (each token must name one caller)",
	}, got)
	for _, p := range got {
		require.NotContains(t, p, "shared-token")
	}
}

func TestWebhookSecretsHaveAMinimumLength(t *testing.T) {
	got := problems(t, `
agents:
  - { id: hooks, token: hooks-token-0123, target: { kind: webhook, url: "https://x.example/h", secret: whsec_c2VjcmV0c2VjcmV0 } }
  - { id: plain, token: plain-token-0123, target: { kind: webhook, url: "https://x.example/h", secret: hunter2 } }
connectors:
  github: [ { name: acme, secret: s3cret } ]
  slack: [ { name: acme, signing_secret: slack-short } ]
  generic: [ { name: billing, secret: short-secret } ]
`, noEnv)
	require.Equal(t, []string{
		"connectors.github[0].secret: must be at least 16 bytes (one signed delivery is enough to guess a shorter one offline)",
		"connectors.slack[0].signing_secret: must be at least 16 bytes (Slack issues 32 hex characters; one signed request is enough to guess a shorter one offline)",
		"connectors.generic[0].secret: must be at least 16 bytes",
		"agents[0].target.secret: the part after whsec_ must decode to at least 16 bytes",
		"agents[1].target.secret: must be at least 16 bytes",
	}, got)
}

// .dockerignore keeps the local database and the repository history out of the build
// context (and so out of any image layer a Dockerfile change might copy them into).
func TestDockerignoreKeepsStateOut(t *testing.T) {
	raw, err := os.ReadFile("../.dockerignore")
	require.NoError(t, err)
	lines := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		lines[strings.TrimSuffix(strings.TrimSpace(l), "/")] = true
	}
	for _, want := range []string{".git", "data", "*.db"} {
		require.True(t, lines[want], ".dockerignore must exclude %s", want)
	}
}

// CI installs from the machine's configured registries: no script names a registry, and
// the only URLs a script writes are the loopback database it starts.
func TestCIScriptsNameNoRegistry(t *testing.T) {
	url := regexp.MustCompile(`[a-z+]+://[^\s"']*`)
	for _, path := range []string{"../.ci/run", "../.ci/mastra.sh", "../.ci/postgres.sh", "../.ci/dovecot.sh", "../Makefile"} {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, bad := range []string{"--registry", "registry="} {
			require.NotContains(t, string(raw), bad, path)
		}
		for _, u := range url.FindAllString(string(raw), -1) {
			require.Regexp(t, `^postgres://[^/]*@127\.0\.0\.1[:/]`, u, "%s names an outside host", path)
		}
	}
}
