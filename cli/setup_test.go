package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/setup")

const (
	setupGitHubSecret  = "gh-setup-secret-0123456789abcdef"
	setupSlackSigning  = "slack-setup-signing-secret-0123"
	setupSlackBotToken = "xoxb-setup-bot-token-0123456789"
	setupSlackAppToken = "xapp-1-setup-app-token-0123456789"
)

const setupConnectors = `
connectors:
  github: [ { name: acme, secret: "` + setupGitHubSecret + `" } ]
  slack:
    - { name: acme, signing_secret: "` + setupSlackSigning + `", bot_token: "` + setupSlackBotToken + `" }
    - { name: sock, socket_mode: true, app_token: "` + setupSlackAppToken + `", bot_token: "` + setupSlackBotToken + `" }
`

// golden compares out with testdata/setup/name (rewritten with -update).
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", "setup", name)
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli -run Setup -update to create it")
	assert.Equal(t, string(want), out)
}

func assertNoSetupSecrets(t *testing.T, outs ...string) {
	t.Helper()
	for _, out := range outs {
		for _, s := range []string{setupGitHubSecret, setupSlackSigning, setupSlackBotToken, setupSlackAppToken} {
			assert.NotContains(t, out, s)
		}
	}
}

func TestSetupSlackManifest(t *testing.T) {
	path := writeConfig(t, t.TempDir(), setupConnectors)
	for _, tc := range []struct{ connector, golden string }{{"acme", "slack-manifest.yaml"}, {"sock", "slack-manifest-socket.yaml"}} {
		t.Run(tc.connector, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "slack", "manifest", "--config", path, "--connector", tc.connector, "--url", "https://hooks.example.com/")
			require.Equal(t, exitOK, code, errOut)
			golden(t, tc.golden, out)
			assertNoSetupSecrets(t, out, errOut)

			var m struct {
				OAuth struct {
					Scopes struct{ Bot []string } `yaml:"scopes"`
				} `yaml:"oauth_config"`
				Settings struct {
					Events struct {
						RequestURL string   `yaml:"request_url"`
						BotEvents  []string `yaml:"bot_events"`
					} `yaml:"event_subscriptions"`
					Interactivity *struct {
						IsEnabled  bool   `yaml:"is_enabled"`
						RequestURL string `yaml:"request_url"`
					} `yaml:"interactivity"`
					SocketMode bool `yaml:"socket_mode_enabled"`
				} `yaml:"settings"`
			}
			require.NoError(t, yaml.Unmarshal([]byte(out), &m), "the manifest is YAML")
			for _, s := range slack.Subscriptions() {
				assert.Contains(t, m.Settings.Events.BotEvents, s.Event, "every event the connector maps is subscribed")
				assert.Contains(t, m.OAuth.Scopes.Bot, s.Scope, "with the scope Slack requires for it")
			}
			for _, s := range slack.LookupScopes() {
				assert.Contains(t, m.OAuth.Scopes.Bot, s)
			}
			assert.Len(t, m.Settings.Events.BotEvents, len(slack.Subscriptions()))
			for _, s := range slack.ApprovalScopes() {
				assert.Contains(t, m.OAuth.Scopes.Bot, s, "approvals post, update and check user groups")
			}
			if tc.connector == "sock" {
				assert.True(t, m.Settings.SocketMode)
				assert.Empty(t, m.Settings.Events.RequestURL)
				assert.Nil(t, m.Settings.Interactivity, "clicks are taken over HTTP only")
			} else {
				assert.False(t, m.Settings.SocketMode)
				assert.Equal(t, "https://hooks.example.com/webhooks/slack/acme", m.Settings.Events.RequestURL)
				require.NotNil(t, m.Settings.Interactivity)
				assert.True(t, m.Settings.Interactivity.IsEnabled)
				assert.Equal(t, "https://hooks.example.com/webhooks/slack/acme/interactions", m.Settings.Interactivity.RequestURL)
			}
		})
	}
}

func TestSetupGitHubWebhook(t *testing.T) {
	path := writeConfig(t, t.TempDir(), setupConnectors)
	code, out, errOut := runCLI(t, nil, "github", "webhook", "--config", path, "--connector", "acme", "--url", "https://hooks.example.com")
	require.Equal(t, exitOK, code, errOut)
	golden(t, "github-webhook.txt", out)
	assertNoSetupSecrets(t, out, errOut)
	assert.Contains(t, out, "https://hooks.example.com/webhooks/github/acme")
	assert.Contains(t, out, "application/json")
	var listed []string
	for _, line := range strings.Split(out, "\n") {
		if e, ok := strings.CutPrefix(line, "    - "); ok {
			listed = append(listed, e)
		}
	}
	assert.Equal(t, github.MappedEvents(), listed, "the events to tick are the events the connector maps")

	code, out, errOut = runCLI(t, nil, "github", "webhook", "--config", path, "--connector", "acme", "--url", "https://hooks.example.com", "--json")
	require.Equal(t, exitOK, code, errOut)
	golden(t, "github-webhook.json", out)
	assertNoSetupSecrets(t, out, errOut)
	var body struct {
		Name   string   `json:"name"`
		Active bool     `json:"active"`
		Events []string `json:"events"`
		Config map[string]string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &body))
	assert.Equal(t, "web", body.Name)
	assert.True(t, body.Active)
	assert.Equal(t, github.MappedEvents(), body.Events)
	assert.Equal(t, map[string]string{"url": "https://hooks.example.com/webhooks/github/acme", "content_type": "json", "insecure_ssl": "0"}, body.Config)
}

// TestSetupBeforeSecretsExist: the helpers run before the Slack app or the GitHub
// webhook exists, so before their secrets are in the environment.
func TestSetupBeforeSecretsExist(t *testing.T) {
	path := writeConfig(t, t.TempDir(), `
connectors:
  github: [ { name: acme, secret: "${GITHUB_WEBHOOK_SECRET}" } ]
  slack: [ { name: acme, signing_secret: "${SLACK_SIGNING_SECRET}", bot_token: "${SLACK_BOT_TOKEN}" } ]
`)
	code, out, errOut := runCLI(t, nil, "slack", "manifest", "--config", path, "--connector", "acme", "--url", "https://hooks.example.com")
	require.Equal(t, exitOK, code, errOut)
	golden(t, "slack-manifest.yaml", out)
	code, out, errOut = runCLI(t, nil, "github", "webhook", "--config", path, "--connector", "acme", "--url", "https://hooks.example.com")
	require.Equal(t, exitOK, code, errOut)
	golden(t, "github-webhook.txt", out)
}

func TestSetupCommandsRefuseBadInput(t *testing.T) {
	path := writeConfig(t, t.TempDir(), setupConnectors)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"slack", "manifest", "--config", path, "--connector", "nope", "--url", "https://x.example"}, `no connectors.slack entry named "nope"`},
		{[]string{"slack", "manifest", "--config", path, "--connector", "acme"}, "--url: required"},
		{[]string{"slack", "manifest", "--config", path, "--connector", "acme", "--url", "http://x.example"}, "https URL"},
		{[]string{"github", "webhook", "--config", path, "--connector", "nope", "--url", "https://x.example"}, `no connectors.github entry named "nope"`},
		{[]string{"github", "webhook", "--config", path, "--connector", "acme", "--url", "x.example"}, "--url: want"},
		{[]string{"github", "webhook", "--config", path}, "Usage: gateway github webhook"},
		{[]string{"slack"}, "Usage: gateway slack manifest"},
	} {
		code, out, errOut := runCLI(t, nil, tc.args...)
		assert.Equal(t, exitConfig, code, tc.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	for _, args := range [][]string{{"slack", "manifest", "--help"}, {"github", "webhook", "--help"}, {"slack", "--help"}} {
		code, _, errOut := runCLI(t, nil, args...)
		assert.Equal(t, exitOK, code, args)
		assert.Contains(t, errOut, "Example:", args)
	}
}

// Slack caps an app's display name at 35 characters: a longer --app-name is cut on a
// character boundary, so the manifest stays valid UTF-8.
func TestSetupSlackManifestLongAppName(t *testing.T) {
	path := writeConfig(t, t.TempDir(), setupConnectors)
	name := strings.Repeat("é", 40)
	code, out, errOut := runCLI(t, nil, "slack", "manifest", "--config", path, "--connector", "acme",
		"--url", "https://hooks.example.com", "--app-name", name)
	require.Equal(t, exitOK, code, errOut)
	var m struct {
		Display struct {
			Name string `yaml:"name"`
		} `yaml:"display_information"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(out), &m))
	assert.True(t, utf8.ValidString(m.Display.Name))
	assert.LessOrEqual(t, utf8.RuneCountInString(m.Display.Name), 35)
	assert.True(t, strings.HasPrefix(m.Display.Name, strings.Repeat("é", 30)))
}
