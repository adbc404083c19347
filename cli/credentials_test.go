package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The image listens on 0.0.0.0 with the shipped config: started as built, it must refuse
// the publicly known dev-only tokens rather than answer with them.
func TestImageRefusesDevOnlyTokens(t *testing.T) {
	env := dockerEnv(t)
	require.Equal(t, "0.0.0.0:8080", env["SIGNALGATE_LISTEN"])
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", "../config.yaml"}, &out, &errOut, lookupIn(env))
	require.Equal(t, exitConfig, code)
	require.Contains(t, errOut.String(), "admin.tokens[0].token: a \"dev-only-\" token is publicly known")
	require.Contains(t, errOut.String(), "agents[0].token: a \"dev-only-\" token is publicly known")
	require.NotContains(t, errOut.String(), "dev-only-admin-token-change-me", "the value itself is never printed")
	require.Empty(t, out.String(), "nothing served")

	// With tokens of its own, the image's config is valid.
	env["SIGNALGATE_ADMIN_TOKEN"], env["CODER_AGENT_TOKEN"] = "ops-7f3c9a1e5b2d4c6a", "coder-2b8e4f6a1c3d"
	out.Reset()
	errOut.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", "../config.yaml"}, &out, &errOut, lookupIn(env)), errOut.String())
}

// dockerEnv reads the ENV lines of the Dockerfile: the environment the image's gateway
// starts with.
func dockerEnv(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../Dockerfile")
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
