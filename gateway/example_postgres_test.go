package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/store/storetest"
)

const (
	examplePostgresConfig = "../examples/config.postgres.yaml"
	exampleCompose        = "../examples/compose.yaml"
)

// The PostgreSQL example of docs/deployment.md works as written: examples/config.postgres.yaml,
// given the variables examples/compose.yaml gives it (the DSN pointed at the test's
// PostgreSQL), passes check without warnings, serves, and ingests a signed GitHub delivery
// into a record.
func TestExamplePostgresConfigServes(t *testing.T) {
	admin := os.Getenv(storetest.PostgresEnv)
	if admin == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	const secret = "example-github-secret-0123456789"
	env := map[string]string{
		"SIGNALGATE_DSN":         storetest.PostgresConfig(t, admin).DSN,
		"SIGNALGATE_LISTEN":      "127.0.0.1:0",
		"SIGNALGATE_ADMIN_TOKEN": "example-admin-token-0123456789",
		"SIGNALGATE_CONSOLE_KEY": "example-console-key-0123456789-0123456789",
		"CODER_AGENT_TOKEN":      "example-coder-token-0123456789",
		"GITHUB_WEBHOOK_SECRET":  secret,
	}
	for name := range env {
		if name != "SIGNALGATE_LISTEN" {
			assert.Contains(t, composeGatewayEnv(t), name, "compose.yaml gives the gateway $%s", name)
		}
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	code, out, errOut := runCLI(t, env, "check", "--config", examplePostgresConfig)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "storage:  postgres ")
	assert.NotContains(t, out, "warning:")

	cfg, err := LoadConfig(examplePostgresConfig, lookup)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })

	body := octokitExample(t, "issue_comment")
	req, err := http.NewRequest(http.MethodPost, "http://"+m.Addr().String()+"/webhooks/github/acme", bytes.NewReader(body))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var got map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, http.StatusOK, resp.StatusCode, got)
	assert.EqualValues(t, 1, got["records"], "the example's routes route a comment")
}

// The compose file mounts the example config, and gives the gateway every variable the
// config needs (each ${VAR} without a default).
func TestExampleComposeMatchesConfig(t *testing.T) {
	raw, err := os.ReadFile(exampleCompose)
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	gw := compose.Services["gateway"]
	assert.Contains(t, gw.Volumes, "./config.postgres.yaml:/etc/signalgate/config.yaml:ro")
	assert.Equal(t, []string{"serve", "--config", "/etc/signalgate/config.yaml"}, gw.Command)

	cfg, err := os.ReadFile(examplePostgresConfig)
	require.NoError(t, err)
	given := composeGatewayEnv(t)
	for _, m := range regexp.MustCompile(`\$\{([A-Z_]+)\}`).FindAllStringSubmatch(string(cfg), -1) {
		assert.Contains(t, given, m[1], "compose.yaml gives the gateway $%s", m[1])
	}
}

// composeGatewayEnv lists the variables compose.yaml sets for the gateway.
func composeGatewayEnv(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(exampleCompose)
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	var out []string
	for k := range compose.Services["gateway"].Environment {
		out = append(out, strings.TrimSpace(k))
	}
	return out
}
