package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckShippedConfig(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "--config", "../config.yaml"}, &out, &errOut, noEnv)
	require.Equal(t, exitOK, code, errOut.String())
	require.Contains(t, out.String(), "../config.yaml: ok")
	require.Contains(t, out.String(), "coder → stream")
	require.Contains(t, out.String(), "storage:  sqlite data/signalgate.db")
	require.NotContains(t, out.String(), "dev-only-coder-token", "check must not print secrets")
	require.NotContains(t, out.String(), "dev-only-admin-token")
}

func TestCheckNeverPrintsSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
storage: { driver: postgres, dsn: "postgres://gw:hunter2hunter2@db/gw" }
admin: { tokens: [ { name: ops, token: "admin-secret-0123456789", scopes: [read] } ] }
agents: [ { id: a, token: "agent-secret-0123", target: { kind: webhook, url: "https://u:pw-in-url@hooks.example/services/T0PATHSECRET?t=qtoken", secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0" } } ]
`), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", path}, &out, &errOut, noEnv), errOut.String())
	for _, secret := range []string{"hunter2hunter2", "admin-secret-0123456789", "agent-secret-0123", "pw-in-url", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0", "T0PATHSECRET", "qtoken"} {
		require.NotContains(t, out.String(), secret)
	}
}

func TestInvalidConfigExitsTwoWithOneLinePerProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("server: { listen: nope, bogus: 1 }\nagents: [ { id: a, token: \"${NOPE}\" } ]\n"), 0o600))
	for _, cmd := range []string{"check", "serve", "migrate"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{cmd, "--config", path}, &out, &errOut, noEnv)
		require.Equal(t, exitConfig, code)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		require.Equal(t, []string{
			path + ": agents[0].token: environment variable NOPE is not set",
			path + ": server.bogus: unknown key (line 1)",
			path + `: server.listen: want host:port, got "nope"`,
		}, lines, cmd)
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitConfig, run(context.Background(), []string{"frobnicate"}, &out, &errOut, noEnv))
	require.Contains(t, errOut.String(), `unknown command "frobnicate"`)
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"version"}, &out, &out, noEnv))
	require.Equal(t, "signalgate dev\n", out.String())
	var help bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"version", "--help"}, &help, &help, noEnv))
	require.Contains(t, help.String(), "Example:\n  gateway version")
}

// A config using persist still loads (exit 0), and check warns once, naming persist and
// log: persist no longer writes to the thread, log does.
func TestCheckWarnsOnPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
agents: [ { id: a, token: "agent-token-0123456789" } ]
policy:
  rules: [ { match: { source: github }, action: log }, { match: { kind: push }, action: persist } ]
  sources: { slack: { action: persist } }
`), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", path}, &out, &errOut, noEnv), errOut.String())
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	require.Len(t, lines, 1, errOut.String())
	require.Contains(t, lines[0], "warning: policy.rules[1], policy.sources.slack: action persist keeps notifications in the inbox only")
	require.Contains(t, lines[0], "use action log")

	out.Reset()
	errOut.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", "../config.yaml"}, &out, &errOut, noEnv))
	require.NotContains(t, errOut.String(), "persist", "the shipped config does not use persist")
}
