package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
)

const slackManifestUsage = `Usage: gateway slack manifest --connector NAME --url https://public.example [flags]

Prints a Slack app manifest (YAML) for a configured Slack connector: the bot scopes
the connector uses, the bot events it maps, and the Events API request URL
{url}/webhooks/slack/{name} (or Socket Mode when the connector has socket_mode: true;
--url is then not needed). Create the app at https://api.slack.com/apps → Create New
App → From an app manifest, paste it, install the app, then put its signing secret
(and bot token, app token) into the environment the config reads.

Example:
  gateway slack manifest --config config.yaml --connector acme --url https://hooks.example.com

Flags:
`

const githubWebhookUsage = `Usage: gateway github webhook --connector NAME --url https://public.example [flags]

Prints what to enter in a repository's (or organization's) Settings → Webhooks → Add
webhook for a configured GitHub connector: the payload URL {url}/webhooks/github/{name},
the content type, and the events the connector maps. With --json it prints the body of
GitHub's REST "create a repository webhook" request instead, without the secret; add
the secret on the way to gh:

Example:
  gateway github webhook --config config.yaml --connector acme --url https://hooks.example.com
  gateway github webhook --connector acme --url https://hooks.example.com --json \
    | jq --arg s "$GITHUB_WEBHOOK_SECRET" '.config.secret = $s' \
    | gh api repos/OWNER/REPO/hooks --input -

Flags:
`

// slackCmd dispatches `gateway slack …`.
func slackCmd(args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	if code, ok := subcommand(args, "manifest", slackManifestUsage, stderr); !ok {
		return code
	}
	fs := newFlagSet("slack manifest", slackManifestUsage, stderr)
	path := configFlag(fs, lookup)
	name := fs.String("connector", "", "the Slack connector's name (connectors.slack[].name)")
	base := fs.String("url", "", "the gateway's public https base URL (not needed for Socket Mode)")
	appName := fs.String("app-name", "", "the app's display name (default: signalgate {connector})")
	if err := fs.Parse(args[1:]); err != nil {
		return flagExit(err)
	}
	if *name == "" || fs.NArg() > 0 {
		fs.Usage()
		return exitConfig
	}
	cfg, err := readSetup(*path)
	if err != nil {
		fmt.Fprintf(stderr, "gateway slack manifest: %v\n", err)
		return exitConfig
	}
	slacks := cfg.slack
	i := slices.IndexFunc(slacks, func(c slack.Config) bool { return c.Name == *name })
	if i < 0 {
		fmt.Fprintf(stderr, "gateway slack manifest: no connectors.slack entry named %q in %s\n", *name, *path)
		return exitConfig
	}
	conn := slacks[i]
	if !conn.SocketMode {
		if err := publicURL(*base, true); err != nil {
			fmt.Fprintf(stderr, "gateway slack manifest: --url: %v\n", err)
			return exitConfig
		}
	}
	out, err := slackManifest(conn, *base, *appName)
	if err != nil {
		fmt.Fprintf(stderr, "gateway slack manifest: %v\n", err)
		return exitFail
	}
	_, _ = stdout.Write(out)
	return exitOK
}

// readSetup reads only the connectors' names and socket_mode from the config file,
// without interpolating or validating: the setup helpers run before the app or the
// webhook exists, so before its secrets do (`gateway check` validates).
func readSetup(path string) (*setupConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc struct {
		Connectors struct {
			GitHub []struct {
				Name string `yaml:"name"`
			} `yaml:"github"`
			Slack []struct {
				Name       string `yaml:"name"`
				SocketMode bool   `yaml:"socket_mode"`
			} `yaml:"slack"`
		} `yaml:"connectors"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg := &setupConfig{}
	for _, c := range doc.Connectors.GitHub {
		cfg.github = append(cfg.github, github.Config{Name: c.Name})
	}
	for _, c := range doc.Connectors.Slack {
		cfg.slack = append(cfg.slack, slack.Config{Name: c.Name, SocketMode: c.SocketMode})
	}
	return cfg, nil
}

// setupConfig is what the setup helpers read of the config file: the GitHub and Slack
// connectors, by name.
type setupConfig struct {
	github []github.Config
	slack  []slack.Config
}

// subcommand reports whether args name want; otherwise it prints usage and says
// how to exit (0 when help was asked for).
func subcommand(args []string, want, usage string, stderr io.Writer) (int, bool) {
	if len(args) > 0 && args[0] == want {
		return exitOK, true
	}
	fmt.Fprint(stderr, usage)
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		return exitOK, false
	}
	return exitConfig, false
}

// publicURL checks a base URL the provider will post to.
func publicURL(raw string, httpsOnly bool) error {
	if raw == "" {
		return fmt.Errorf("required: the gateway's public base URL, like https://hooks.example.com")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && (httpsOnly || u.Scheme != "http")) {
		want := "an http(s) URL"
		if httpsOnly {
			want = "an https URL (Slack posts only to https)"
		}
		return fmt.Errorf("want %s like https://hooks.example.com, got %q", want, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("want a base URL without query or fragment, got %q", raw)
	}
	return nil
}

// ingestURL is where a provider posts a connector's events.
func ingestURL(base, source, name string) string {
	return strings.TrimRight(base, "/") + "/webhooks/" + source + "/" + url.PathEscape(name)
}

// The manifest, in Slack's documented schema (only the keys signalgate sets).
type slackApp struct {
	DisplayInformation struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	} `yaml:"display_information"`
	Features struct {
		AppHome struct {
			HomeTabEnabled             bool `yaml:"home_tab_enabled"`
			MessagesTabEnabled         bool `yaml:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		BotUser struct {
			DisplayName  string `yaml:"display_name"`
			AlwaysOnline bool   `yaml:"always_online"`
		} `yaml:"bot_user"`
	} `yaml:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			RequestURL string   `yaml:"request_url,omitempty"`
			BotEvents  []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		// Interactivity is where Slack posts approval button clicks.
		Interactivity *struct {
			IsEnabled  bool   `yaml:"is_enabled"`
			RequestURL string `yaml:"request_url,omitempty"`
		} `yaml:"interactivity,omitempty"`
		OrgDeployEnabled     bool `yaml:"org_deploy_enabled"`
		SocketModeEnabled    bool `yaml:"socket_mode_enabled"`
		TokenRotationEnabled bool `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
}

// slackManifest renders the manifest for conn: the events and scopes come from the
// connector's own lists.
func slackManifest(conn slack.Config, base, appName string) ([]byte, error) {
	var m slackApp
	if appName == "" {
		appName = "signalgate " + conn.Name
	}
	appName = connectors.Truncate(appName, 35) // Slack's limit for display_information.name, in characters
	m.DisplayInformation.Name = appName
	m.DisplayInformation.Description = "Mentions, direct messages and channel messages for AI agents, through signalgate"
	// The messages tab lets people DM the bot (message.im).
	m.Features.AppHome.MessagesTabEnabled = true
	m.Features.BotUser.DisplayName = strings.ToLower(strings.ReplaceAll(appName, " ", "-"))
	scopes := append(slack.LookupScopes(), slack.ApprovalScopes()...)
	for _, s := range slack.Subscriptions() {
		m.Settings.EventSubscriptions.BotEvents = append(m.Settings.EventSubscriptions.BotEvents, s.Event)
		scopes = append(scopes, s.Scope)
	}
	slices.Sort(scopes)
	m.OAuthConfig.Scopes.Bot = slices.Compact(scopes)
	var head string
	if conn.SocketMode {
		m.Settings.SocketModeEnabled = true
		head = "# Socket Mode: after creating the app, make an app-level token with the\n" +
			"# connections:write scope (Basic Information → App-Level Tokens) for app_token.\n" +
			"# Tool approvals need the HTTP interactivity endpoint (a connector with signing_secret).\n"
	} else {
		m.Settings.EventSubscriptions.RequestURL = ingestURL(base, "slack", conn.Name)
		m.Settings.Interactivity = &struct {
			IsEnabled  bool   `yaml:"is_enabled"`
			RequestURL string `yaml:"request_url,omitempty"`
		}{IsEnabled: true, RequestURL: ingestURL(base, "slack", conn.Name) + "/interactions"}
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Slack app manifest for signalgate connector %q (connectors.slack).\n", conn.Name)
	fmt.Fprintf(&buf, "# Create the app from it at https://api.slack.com/apps (From an app manifest).\n%s", head)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&m); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// githubCmd dispatches `gateway github …`.
func githubCmd(args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	if code, ok := subcommand(args, "webhook", githubWebhookUsage, stderr); !ok {
		return code
	}
	fs := newFlagSet("github webhook", githubWebhookUsage, stderr)
	path := configFlag(fs, lookup)
	name := fs.String("connector", "", "the GitHub connector's name (connectors.github[].name)")
	base := fs.String("url", "", "the gateway's public base URL")
	asJSON := fs.Bool("json", false, `print the body of GitHub's REST "create a repository webhook" request (no secret)`)
	if err := fs.Parse(args[1:]); err != nil {
		return flagExit(err)
	}
	if *name == "" || fs.NArg() > 0 {
		fs.Usage()
		return exitConfig
	}
	if err := publicURL(*base, false); err != nil {
		fmt.Fprintf(stderr, "gateway github webhook: --url: %v\n", err)
		return exitConfig
	}
	cfg, err := readSetup(*path)
	if err != nil {
		fmt.Fprintf(stderr, "gateway github webhook: %v\n", err)
		return exitConfig
	}
	i := slices.IndexFunc(cfg.github, func(c github.Config) bool { return c.Name == *name })
	if i < 0 {
		fmt.Fprintf(stderr, "gateway github webhook: no connectors.github entry named %q in %s\n", *name, *path)
		return exitConfig
	}
	payloadURL := ingestURL(*base, "github", *name)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(githubHookRequest(payloadURL)); err != nil {
			return exitFail
		}
		return exitOK
	}
	p := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	p("GitHub webhook for signalgate connector %q (repository or organization Settings → Webhooks → Add webhook):", *name)
	p("  Payload URL:       %s", payloadURL)
	p("  Content type:      application/json")
	p("  Secret:            the value of connectors.github[%d].secret (not printed here); deliveries without it are refused", i)
	p("  SSL verification:  enabled")
	p("  Events:            Let me select individual events, and tick:")
	for _, e := range github.MappedEvents() {
		p("    - %s", e)
	}
	p("  Active:            yes")
	p("GitHub sends a ping right away: the gateway answers it 200 (Recent Deliveries shows it).")
	return exitOK
}

// githubHookRequest is the body of POST /repos/{owner}/{repo}/hooks, without the
// secret (which is never printed).
func githubHookRequest(payloadURL string) any {
	return struct {
		Name   string         `json:"name"`
		Active bool           `json:"active"`
		Events []string       `json:"events"`
		Config *gh.HookConfig `json:"config"`
	}{
		Name: "web", Active: true, Events: github.MappedEvents(),
		Config: &gh.HookConfig{URL: gh.String(payloadURL), ContentType: gh.String("json"), InsecureSSL: gh.String("0")},
	}
}
