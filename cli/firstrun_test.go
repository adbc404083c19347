package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped config switches to PostgreSQL with two variables; either one alone is a
// config error naming both keys, and no SQLite file is made in a directory named after
// the URL (password included).
func TestShippedConfigStorageFromEnvironment(t *testing.T) {
	const pgURL = "postgres://gw:Pw-SENTINEL@db.internal:5432/gw"
	shipped := shippedConfig(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		code int
	}{
		{"dsn only", map[string]string{"SIGNALGATE_DSN": pgURL}, exitConfig},
		{"postgresql scheme", map[string]string{"SIGNALGATE_DSN": "postgresql://gw:Pw-SENTINEL@db/gw"}, exitConfig},
		{"driver only", map[string]string{"SIGNALGATE_STORAGE_DRIVER": "postgres"}, exitConfig},
		{"both", map[string]string{"SIGNALGATE_STORAGE_DRIVER": "postgres", "SIGNALGATE_DSN": pgURL}, exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, errOut := runCLI(t, c.env, "check", "--config", shipped)
			require.Equal(t, c.code, code, out+errOut)
			assert.NotContains(t, out+errOut, "SENTINEL")
			if c.code == exitOK {
				assert.Contains(t, out, "storage:  postgres host=db.internal port=5432 dbname=gw user=gw password=[redacted]")
				return
			}
			assert.Contains(t, errOut, "storage.dsn: ")
			assert.Contains(t, errOut, "storage.driver")
		})
	}
}

// shippedConfig is the absolute path of the repository's config.yaml (tests may chdir).
func shippedConfig(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../config.yaml")
	require.NoError(t, err)
	return p
}

// helpSecrets are the secret-holding variables the commands and the shipped config read.
var helpSecrets = map[string]string{
	"SIGNALGATE_AGENT_TOKEN": "agent-token-SENTINEL-1",
	"SIGNALGATE_ADMIN_TOKEN": "admin-token-SENTINEL-2",
	"SIGNALGATE_CONSOLE_KEY": "console-key-SENTINEL-3-0123456789abcdef0123",
	"SIGNALGATE_DSN":         "postgres://gw:dsn-SENTINEL-4@db/gw",
	"CODER_AGENT_TOKEN":      "coder-token-SENTINEL-5",
	"GITHUB_WEBHOOK_SECRET":  "github-SENTINEL-6",
	"SLACK_SIGNING_SECRET":   "slack-SENTINEL-7",
	"SLACK_BOT_TOKEN":        "xoxb-SENTINEL-8",
	"IMAP_PASSWORD":          "imap-SENTINEL-9",
	"BILLING_WEBHOOK_SECRET": "whsec_SENTINEL10",
}

// commandLine is a line of the usage's command list: two spaces, the command (one or two
// words), two or more spaces, its description.
var commandLine = regexp.MustCompile(`^  ([a-z]+(?: [a-z]+)?)  +\S`)

// Every subcommand's --help, with every secret variable set, shows none of their values
// (send and replay used to print the token from the environment as --token's default).
func TestHelpNeverShowsSecrets(t *testing.T) {
	code, usage, _ := runCLI(t, nil, "help")
	require.Equal(t, exitOK, code)
	var cmds []string
	for _, line := range strings.Split(usage, "\n") {
		if m := commandLine.FindStringSubmatch(line); m != nil {
			cmds = append(cmds, m[1])
		}
	}
	require.Contains(t, cmds, "send")
	require.Contains(t, cmds, "replay")
	for _, cmd := range append(cmds, "help") {
		for _, flag := range []string{"--help", "-h"} {
			args := append(strings.Fields(cmd), flag)
			code, out, errOut := runCLI(t, helpSecrets, args...)
			require.Equal(t, exitOK, code, "%v: %s", args, errOut)
			for name, v := range helpSecrets {
				assert.NotContains(t, out+errOut, v, "%v shows $%s", args, name)
			}
			assert.NotContains(t, out+errOut, "SENTINEL", args)
		}
	}
	_, _, errOut := runCLI(t, helpSecrets, "send", "--help")
	assert.Contains(t, errOut, "from $SIGNALGATE_AGENT_TOKEN")
	_, _, errOut = runCLI(t, helpSecrets, "replay", "--help")
	assert.Contains(t, errOut, "from $SIGNALGATE_ADMIN_TOKEN")
}

// An error that an environment variable would fix names the variable.
func TestTokenErrorNamesVariable(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "--agent", "a", "--resource", "r", "--thread", "t", "--kind", "k", "--summary", "s"}, "gateway send: --token: required, or set SIGNALGATE_AGENT_TOKEN"},
		{[]string{"tail", "--agent", "a", "--resource", "r", "--thread", "t"}, "--token: required, or set SIGNALGATE_AGENT_TOKEN"},
		{[]string{"replay", "some-id"}, "gateway replay: --token: required, or set SIGNALGATE_ADMIN_TOKEN"},
	} {
		code, _, errOut := runCLI(t, nil, c.args...)
		require.Equal(t, exitConfig, code, c.args)
		require.Contains(t, errOut, c.want, c.args)
	}
}

// check says when there are no connectors, and warns (exit 0) about a route that no
// configured connector can reach and a connector whose events no route matches.
func TestCheckWarnsAboutUnreachableRoutes(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "check", "--config", shippedConfig(t))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "\nconnectors: none\n")
	assert.Contains(t, out, "warning:  route ci matches source github, but no such connector is configured")
	assert.Contains(t, out, "warning:  route reviews matches source github, but no such connector is configured")

	path := writeConfig(t, t.TempDir(), `
connectors:
  generic: [ { name: billing, secret: "`+billingSecret+`" }, { name: shop, secret: "`+billingSecret+`" } ]
routes:
  - { name: invoices, match: { source: generic, connector: BILLING }, thread: { agent: coder, resource: r, thread: t } }
  - { name: chat, match: { source: slack }, thread: { agent: coder, resource: r, thread: t } }
  - { name: any-mail, match: { connector: "sup*" }, thread: { agent: coder, resource: r, thread: t } }
`)
	code, out, errOut = runCLI(t, nil, "check", "--config", path)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "\nconnectors:\n  - generic/billing")
	warnings := regexp.MustCompile(`(?m)^warning: .*$`).FindAllString(out, -1)
	assert.Equal(t, []string{
		"warning:  route chat matches source slack, but no such connector is configured, so nothing reaches it",
		"warning:  route any-mail matches connector sup*, but no such connector is configured, so nothing reaches it",
		"warning:  connector generic/shop: no route matches its events; they are stored as unrouted",
	}, warnings)
}

// serveOutput runs serve in process and returns its base URL (from its first stdout
// line) and stop, which ends it and returns the rest of its stdout.
func serveOutput(t *testing.T, path string) (base string, stop func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve", "--config", path}, pw, io.Discard, noEnv)
		pw.Close()
		done <- code
	}()
	r := bufio.NewReader(pr)
	listening, err := r.ReadString('\n')
	require.NoError(t, err)
	_, base, ok := strings.Cut(strings.TrimSpace(listening), "listening on ")
	require.True(t, ok, listening)
	return base, func() string {
		cancel()
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, exitOK, <-done)
		return string(rest)
	}
}

// A first run tells where the console is and which token signs in (the value only for a
// public dev-only- token), and the gateway's root sends a browser there.
func TestFirstRunPointsAtConsole(t *testing.T) {
	path := writeConfig(t, t.TempDir(), `
admin: { tokens: [ { name: ops, token: dev-only-admin-token-change-me, scopes: [read, write] } ] }
`)
	base, stop := serveOutput(t, path)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/console", resp.Header.Get("Location"))
	assert.True(t, strings.HasPrefix(stop(), "console: "+base+"/console — sign in with admin token \"ops\": dev-only-admin-token-change-me"+
		" (a public dev token, accepted on loopback only; the shipped config takes yours from SIGNALGATE_ADMIN_TOKEN)\n"))

	// A token of one's own is never printed, only its name.
	base, stop = serveOutput(t, writeConfig(t, t.TempDir(), `
admin: { tokens: [ { name: ops, token: own-SENTINEL-token-0123456789, scopes: [read] }, { name: ci, token: other-SENTINEL-0123456789, scopes: [read] } ] }
`))
	out := stop()
	assert.Contains(t, out, "console: "+base+"/console — sign in with an admin token (admin.tokens: ops, ci)\n")
	assert.NotContains(t, out, "SENTINEL")

	_, stop = serveOutput(t, writeConfig(t, t.TempDir(), ""))
	assert.Contains(t, stop(), "/console — no admin.tokens are configured, so nobody can sign in\n")
}

// explain calls no outside API unless --connect: a Slack connector with a bot token
// looks names up when serving, and explain without --connect must not.
func TestExplainOfflineUnlessConnect(t *testing.T) {
	calls := make(chan string, 100)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"user":{"id":"U1","name":"jane"},"channel":{"id":"C1","name":"general"}}`)
	}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	path := writeConfig(t, dir, `
connectors:
  slack: [ { name: acme, signing_secret: slack-signing-0123456789, bot_token: xoxb-0123456789, bot_user_id: U0BOT, api_url: "`+api.URL+`" } ]
routes:
  - { name: slack-messages-of-every-channel, match: { source: slack }, thread: { agent: coder, resource: slack, thread: "{{.Channel}}" } }
`)
	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"slack","connector":"acme","headers":{},"body":
		{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@U0BOT> hi","ts":"1.2","channel":"C1","event_ts":"1.2"}}}`), 0o600))

	code, out, errOut := runCLI(t, nil, "explain", "--config", path, sample)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, "Slack names and channel types are not looked up (--connect does")
	assert.Contains(t, out, "  slack-messages-of-every-channel  matches → coder/slack/C1\n", "the route column stays apart from its verdict")
	assert.Empty(t, calls, "no API call without --connect")

	code, _, errOut = runCLI(t, nil, "explain", "--config", path, "--connect", sample)
	require.Equal(t, exitOK, code, errOut)
	assert.NotEmpty(t, calls, "--connect looks names up as serving would")
}

// runs finish and send --finish end a thread's run through the agent API: the policy
// below tells the thread's presence by its decision (discard: active, defer: idle), and
// nothing it decides wakes the thread behind the test's back.
func TestRunsFinishFromCLI(t *testing.T) {
	m, _ := startMainAt(t, t.TempDir(), `
policy:
  rules:
    - { when: 'presence == "active"', action: discard }
    - { when: 'presence == "idle"', action: defer, after: 1h }
`)
	base := "http://" + m.Addr().String()
	env := map[string]string{envURL: base, envAgentToken: cliAgentToken}
	thread := []string{"--agent", "coder", "--resource", "acme/api", "--thread", "acme/api#7"}
	api := &client{base: base, token: cliAgentToken, http: http.DefaultClient}
	openRun := func() string {
		var run struct {
			ID string `json:"runId"`
		}
		code, err := api.doStatus(context.Background(), http.MethodPost, threadPath("coder", "acme/api", "acme/api#7")+"/runs", nil, &run)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		return run.ID
	}
	send := func(extra ...string) string {
		args := append(append([]string{"send"}, thread...), "--kind", "review-requested", "--summary", "review #7")
		code, out, errOut := runCLI(t, env, append(args, extra...)...)
		require.Equal(t, exitOK, code, errOut)
		return out
	}

	run := openRun()
	assert.Contains(t, send(), "decision: discard", "a run is open: the thread is active")
	code, out, errOut := runCLI(t, env, append([]string{"runs", "finish"}, thread...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "run "+run+" finished on coder/acme/api/acme/api#7; the thread is idle\n", out)
	assert.Contains(t, send(), "decision: defer", "the run ended: the thread is idle")

	code, out, errOut = runCLI(t, env, append([]string{"runs", "finish"}, thread...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "no run was open on coder/acme/api/acme/api#7; the thread is idle\n", out)
	assert.Contains(t, send(), "decision: defer", "finding no run left the thread idle")

	run = openRun()
	out = send("--finish")
	assert.Contains(t, out, "ended run "+run+"\n")
	assert.Contains(t, out, "decision: defer")

	run = openRun()
	code, out, errOut = runCLI(t, env, append([]string{"runs", "finish", "--run", run, "--status", "aborted"}, thread...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "run "+run+" aborted on coder/acme/api/acme/api#7; the thread is idle\n", out)
	code, _, errOut = runCLI(t, env, append([]string{"runs", "finish", "--run", "nope"}, thread...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `gateway runs finish: end run nope: HTTP 404`)
}
