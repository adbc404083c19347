package gateway

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func noEnv(string) (string, bool) { return "", false }

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func problems(t *testing.T, yaml string, lookup func(string) (string, bool)) []string {
	t.Helper()
	_, err := ParseConfig("test.yaml", []byte(yaml), lookup)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "want a ConfigError, got %v", err)
	return ce.Problems
}

const minimal = `
agents:
  - id: coder
    token: "${CODER_TOKEN}"
`

func TestMissingVariableNamed(t *testing.T) {
	require.Equal(t, []string{"agents[0].token: environment variable CODER_TOKEN is not set"}, problems(t, minimal, noEnv))
	cfg, err := ParseConfig("test.yaml", []byte(minimal), env("CODER_TOKEN", "tok-0123456789abc"))
	require.NoError(t, err)
	require.Equal(t, "tok-0123456789abc", cfg.Agents[0].Token.Reveal())
}

func TestInterpolationDefaultsAndTypes(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
server: { listen: "${LISTEN:-127.0.0.1:9999}", shutdown_grace: "${GRACE:-3s}" }
agents: [ { id: a, token: "${TOK}" } ]
`), env("TOK", "12345678901234567890", "GRACE", "7s"))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9999", cfg.Server.Listen)
	require.Equal(t, 7*time.Second, cfg.Server.ShutdownGrace)
	// A token that looks like a number stays a string; a bare $ stays as is.
	cfg, err = ParseConfig("t.yaml", []byte(`agents: [ { id: a, token: "${TOK}" } ]`), env("TOK", "123456789012345$x"))
	require.NoError(t, err)
	require.Equal(t, "123456789012345$x", cfg.Agents[0].Token.Reveal())
}

func TestUnknownKeysNamedByPath(t *testing.T) {
	got := problems(t, `
server: { listn: "127.0.0.1:1" }
agents:
  - id: coder
    token: dev-only-coder-token
    target: { kind: stream, urll: x }
policy:
  rules:
    - match: { source: github, knd: push }
      action: summarize
`, noEnv)
	require.Equal(t, []string{
		"server.listn: unknown key (line 2)",
		"agents[0].target.urll: unknown key (line 6)",
		"policy.rules[0].match.knd: unknown key (line 9)",
	}, got)
}

func TestValidationNamesKeyPath(t *testing.T) {
	got := problems(t, `
storage: { driver: mysql }
agents:
  - id: coder
    token: dev-only-coder-token
  - id: support
    token: dev-only-support-token
    target: { kind: mastra }
  - id: coder
    token: short
policy:
  summary_interval: 10s
  rules: [ { match: { source: github }, action: explode } ]
`, noEnv)
	require.Equal(t, []string{
		`storage.driver: unknown "mysql" (want sqlite or postgres)`,
		"agents[1].target.url: required for kind mastra",
		"agents[1].target.agent_id: required for kind mastra",
		"agents[2].token: must be at least 12 characters",
		`agents[2].id: duplicate agent "coder"`,
		`policy.rules[0].action: unknown action "explode" (want deliver, queue, summarize, defer, log, persist or discard)`,
	}, got)
}

func TestBadValueNamesKey(t *testing.T) {
	got := problems(t, `
server:
  shutdown_grace: soon
agents: [ { id: a, token: dev-only-coder-token } ]
`, noEnv)
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0], "server.shutdown_grace: "), got[0])
}

func TestInvalidYAML(t *testing.T) {
	got := problems(t, "server: [unclosed\n", noEnv)
	require.Len(t, got, 1)
	require.Contains(t, got[0], "not valid YAML")
}

func TestConnectorProblemsNamed(t *testing.T) {
	got := problems(t, `
connectors:
  github:
    - { name: acme, secret: "" }
    - { name: acme, secret: s3cret }
  generic:
    - { name: billing }
`, noEnv)
	require.Equal(t, []string{
		"connectors.github[0].secret: required (unsigned GitHub deliveries are never accepted)",
		"connectors.github[1].secret: must be at least 16 bytes (one signed delivery is enough to guess a shorter one offline)",
		`connectors.github[1].name: duplicate connector name "acme" (also github[0])`,
		"connectors.generic[0].secret: required (unsigned deliveries are never accepted)",
	}, got)
}

func TestEveryProblemInOnePass(t *testing.T) {
	got := problems(t, `
server:
  listn: "127.0.0.1:1"
  body_limit: -5MB
  request_timeout: 1x
agents:
  - id: support
    token: dev-only-support-token
    target: { kind: mastra }
connectors:
  github: [ { name: acme, secret: "${GITHUB_WEBHOOK_SECRET}" } ]
`, noEnv)
	require.ElementsMatch(t, []string{
		"connectors.github[0].secret: environment variable GITHUB_WEBHOOK_SECRET is not set",
		"server.listn: unknown key (line 3)",
		`server.body_limit: want a size like 25MB or 512KB, got "-5MB" (line 4)`,
		"server.request_timeout: cannot unmarshal !!str `1x` into time.Duration (line 5)",
		"agents[0].target.url: required for kind mastra",
		"agents[0].target.agent_id: required for kind mastra",
	}, got, "the unset secret is not reported a second time as required")
}

func TestSizesAcceptUnits(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
server: { body_limit: 1MiB }
agents: [ { id: a, token: dev-only-coder-token, max_contents: 256KiB } ]
`), noEnv)
	require.NoError(t, err)
	require.EqualValues(t, 1<<20, cfg.Server.BodyLimit)
	require.EqualValues(t, 256<<10, cfg.Agents[0].MaxContents)
}

func TestMastraAgentNeedsNoToken(t *testing.T) {
	// The design's own example: a Mastra agent reached over HTTP, with no agent API token.
	_, err := ParseConfig("t.yaml", []byte(`
agents:
  - id: support
    target: { kind: mastra, url: "http://127.0.0.1:4111", agent_id: supportAgent }
`), noEnv)
	require.NoError(t, err)
	require.Equal(t, []string{"agents[0].token: required (the agent API's bearer token)"},
		problems(t, "agents: [ { id: coder, target: { kind: stream } } ]", noEnv))
}

func TestSecretsListsEveryCredential(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
admin: { tokens: [ { name: ops, token: admin-token-0123456789, scopes: [read] } ] }
agents:
  - { id: coder, token: coder-token-0123 }
  - { id: support, target: { kind: mastra, url: "http://127.0.0.1:4111", agent_id: a, headers: { Authorization: "Bearer mk-0123456" } } }
  - { id: hooks, token: hooks-token-0123, target: { kind: webhook, url: "https://x.example/h", secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw } }
connectors:
  github: [ { name: acme, secret: gh-secret-0123456789 } ]
  slack: [ { name: acme, signing_secret: slack-secret-0123456, bot_token: xoxb-1 } ]
  email: [ { name: support, addr: "127.0.0.1:993", username: u, password: imap-pw } ]
  generic: [ { name: billing, secret: whsec_c2VjcmV0c2VjcmV0c2VjcmV0 } ]
`), noEnv)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"admin-token-0123456789", "coder-token-0123", "Bearer mk-0123456",
		"hooks-token-0123", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "gh-secret-0123456789", "slack-secret-0123456", "xoxb-1",
		"imap-pw", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0"}, cfg.Secrets())
}

func TestBadExpressionNamesKeyAndPosition(t *testing.T) {
	got := problems(t, minimal+`
routes:
  - name: lint
    match: { source: github, when: 'payload.check_run.name matchs "^lint"' }
    thread: { agent: coder, resource: r, thread: t }
policy:
  rules:
    - when: 'metadata.author_is_bot && kind == "comment"'
      action: discard
    - when: 'presence == "active" && priorty == "medium"'
      action: defer
      after: 30m
`, env("CODER_TOKEN", "a-long-enough-token"))
	require.Len(t, got, 2, got)
	require.Contains(t, got[0], "routes[0].match.when: line 1, column 24: ", got[0])
	require.Equal(t, "policy.rules[1].when: line 1, column 25: unknown name priorty", got[1])
}

// TestSecretsListsRotatedCredentials: both secrets of every rotation are redacted, and a
// rotation set up wrong is refused naming the keys, never the values.
func TestSecretsListsRotatedCredentials(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
agents:
  - { id: hooks, token: hooks-token-0123, target: { kind: webhook, url: "https://x.example/h", secrets: [whsec_bmV3LXRhcmdldC1zZWNyZXQtMDEyMzQ1Njc4OQ==, whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw] } }
connectors:
  github: [ { name: acme, secrets: [gh-secret-new-0123456789, gh-secret-old-0123456789] } ]
  slack: [ { name: acme, signing_secrets: [slack-secret-new-0123456, slack-secret-old-0123456] } ]
  generic: [ { name: billing, secrets: [whsec_c2VjcmV0c2VjcmV0c2VjcmV0, whsec_b2xkc2VjcmV0b2xkc2VjcmV0] } ]
`), noEnv)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"hooks-token-0123", "whsec_bmV3LXRhcmdldC1zZWNyZXQtMDEyMzQ1Njc4OQ==", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"gh-secret-new-0123456789", "gh-secret-old-0123456789", "slack-secret-new-0123456", "slack-secret-old-0123456",
		"whsec_c2VjcmV0c2VjcmV0c2VjcmV0", "whsec_b2xkc2VjcmV0b2xkc2VjcmV0"}, cfg.Secrets())

	got := strings.Join(problems(t, `
agents:
  - { id: hooks, token: hooks-token-0123, target: { kind: webhook, url: "https://x.example/h", secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, secrets: [whsec_bmV3LXRhcmdldC1zZWNyZXQtMDEyMzQ1Njc4OQ==] } }
  - { id: hooks2, token: hooks-token-4567, target: { kind: webhook, url: "https://x.example/h", secrets: [whsec_bmV3LXRhcmdldC1zZWNyZXQtMDEyMzQ1Njc4OQ==, whsec_c2hvcnQ=] } }
connectors:
  github: [ { name: acme, secrets: [gh-secret-1-0123456789, gh-secret-2-0123456789, gh-secret-3-0123456789] } ]
`, noEnv), "\n")
	for _, want := range []string{
		"agents[0].target.secret, target.secrets: set one or the other",
		"agents[1].target.secrets[1]: the part after whsec_ must decode to at least 16 bytes",
		"connectors.github[0].secrets: at most 2",
	} {
		require.Contains(t, got, want)
	}
	for _, v := range []string{"MfKQ9r8", "bmV3LXRh", "c2hvcnQ", "gh-secret-"} {
		require.NotContains(t, got, v)
	}
}
