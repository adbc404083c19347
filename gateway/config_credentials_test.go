package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dockerEnv reads the ENV lines of the Dockerfile: the environment the image's gateway
// starts with.
func dockerEnv(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "ENV "); ok {
			k, v, _ := strings.Cut(rest, "=")
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// The image listens on 0.0.0.0 with the shipped config: started as built, it must refuse
// the publicly known dev-only tokens rather than answer with them.
func TestImageRefusesDevOnlyTokens(t *testing.T) {
	env := dockerEnv(t)
	require.Equal(t, "0.0.0.0:8080", env["SIGNALGATE_LISTEN"])
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", "../../config.yaml"}, &out, &errOut, lookupIn(env))
	require.Equal(t, exitConfig, code)
	require.Contains(t, errOut.String(), "admin.tokens[0].token: a \"dev-only-\" token is publicly known")
	require.Contains(t, errOut.String(), "agents[0].token: a \"dev-only-\" token is publicly known")
	require.NotContains(t, errOut.String(), "dev-only-admin-token-change-me", "the value itself is never printed")
	require.Empty(t, out.String(), "nothing served")

	// With tokens of its own, the image's config is valid.
	env["SIGNALGATE_ADMIN_TOKEN"], env["CODER_AGENT_TOKEN"] = "ops-7f3c9a1e5b2d4c6a", "coder-2b8e4f6a1c3d"
	out.Reset()
	errOut.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", "../../config.yaml"}, &out, &errOut, lookupIn(env)), errOut.String())
}

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
	raw, err := os.ReadFile("../../.dockerignore")
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
	for _, path := range []string{"../../.ci/run", "../../.ci/mastra.sh", "../../.ci/postgres.sh", "../../.ci/dovecot.sh", "../../Makefile"} {
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
