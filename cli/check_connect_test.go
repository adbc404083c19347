package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slack-go/slack/slacktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/targets/mastra/mastratest"
)

// connectLines runs `check --connect` on a config and returns its exit code and the
// lines under "connections:".
func connectLines(t *testing.T, conf string) (int, []string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	code, out, errOut := runCLI(t, nil, "check", "--config", path, "--connect", "--timeout", "20s")
	_, conns, found := strings.Cut(out, "connections:\n")
	require.True(t, found, "no connections section:\n%s%s", out, errOut)
	return code, strings.Split(strings.TrimSpace(conns), "\n"), out + errOut
}

// lineOf returns the line of the named check.
func lineOf(t *testing.T, lines []string, name string) string {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l[6:], name+": ") {
			return l
		}
	}
	t.Fatalf("no line for %s in %q", name, lines)
	return ""
}

// closedURL is an http URL on a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func sqliteConf(t *testing.T, extra string) string {
	return fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, filepath.Join(t.TempDir(), "gw.db"), extra)
}

func TestCheckConnectDatabase(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			conf := fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: %s, dsn: %q }
agents: [ { id: coder, token: dev-only-coder-token } ]
`, b.Config.Driver, b.Config.DSN)
			code, lines, all := connectLines(t, conf)
			assert.Equal(t, exitFail, code, all)
			assert.Contains(t, lineOf(t, lines, "database"), "FAIL")
			assert.Contains(t, lineOf(t, lines, "database"), "not migrated: run `gateway migrate`")

			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
			c, _, errOut := runCLI(t, nil, "migrate", "--config", path)
			require.Equal(t, exitOK, c, errOut)
			code, lines, all = connectLines(t, conf)
			assert.Equal(t, exitOK, code, all)
			assert.Equal(t, []string{"ok    database: " + b.Config.Driver + " " + b.Config.RedactedDSN() + " reachable, migrations applied"}, lines)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		dsn := "postgres://signalgate:pw-not-printed@" + strings.TrimPrefix(closedURL(t), "http://") + "/x?sslmode=disable"
		code, lines, all := connectLines(t, fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: postgres, dsn: %q }
agents: [ { id: coder, token: dev-only-coder-token } ]
`, dsn))
		assert.Equal(t, exitFail, code)
		assert.Contains(t, lineOf(t, lines, "database"), "FAIL")
		assert.Contains(t, lineOf(t, lines, "database"), "check storage.dsn")
		assert.NotContains(t, all, "pw-not-printed")
	})
}

func TestCheckConnectIMAP(t *testing.T) {
	addr, user, password := os.Getenv("SIGNALGATE_TEST_IMAP_ADDR"), os.Getenv("SIGNALGATE_TEST_IMAP_USER"), os.Getenv("SIGNALGATE_TEST_IMAP_PASSWORD")
	if addr == "" {
		t.Skip("needs SIGNALGATE_TEST_IMAP_ADDR (run .ci/dovecot.sh)")
	}
	mail := func(pw string) string {
		return fmt.Sprintf(`connectors:
  email: [ { name: support, addr: %q, tls: false, username: %q, password: %q, mailboxes: [INBOX] } ]
`, addr, user, pw)
	}
	code, lines, all := connectLines(t, sqliteConf(t, mail(password)))
	line := lineOf(t, lines, "email/support")
	assert.True(t, strings.HasPrefix(line, "ok    "), line)
	assert.Regexp(t, `logged in to .* as `+user+`; INBOX UIDVALIDITY [1-9][0-9]* \(\d+ messages\)`, line)
	assert.NotContains(t, all, password)
	assert.Equal(t, exitFail, code, "the database is not migrated: %s", all)

	wrong := "wrong-password-not-printed"
	_, lines, all = connectLines(t, sqliteConf(t, mail(wrong)))
	line = lineOf(t, lines, "email/support")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), line)
	assert.Contains(t, line, "check connectors.email[0].username and connectors.email[0].password")
	assert.NotContains(t, all, wrong)

	_, lines, _ = connectLines(t, sqliteConf(t, strings.Replace(mail(password), "[INBOX]", "[INBOX, Nope]", 1)))
	line = lineOf(t, lines, "email/support")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), line)
	assert.Contains(t, line, "check connectors.email[0].mailboxes")
}

func TestCheckConnectSlack(t *testing.T) {
	const good, bad, app = "xoxb-good-bot-token-123", "xoxb-revoked-bot-token-456", "xapp-1-app-token-789"
	ts := slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/auth.test", func(w http.ResponseWriter, r *http.Request) {
			// slack-go sends the token as a form field (older) or a bearer header.
			if r.Header.Get("Authorization") != "Bearer "+good && r.FormValue("token") != good {
				_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
				return
			}
			_, _ = w.Write([]byte(`{"ok":true,"url":"https://acme.slack.com/","team":"Acme","user":"signalgate","team_id":"T0ACME","user_id":"U0BOT","bot_id":"B0BOT"}`))
		})
	})
	ts.Start()
	t.Cleanup(ts.Stop)
	api := ts.GetAPIURL()
	conf := sqliteConf(t, fmt.Sprintf(`connectors:
  slack:
    - { name: acme, signing_secret: slack-signing-secret-0123, bot_token: %q, api_url: %q, bot_user_id: U0BOT }
    - { name: sock, socket_mode: true, app_token: %q, bot_token: %q, api_url: %q }
    - { name: old, signing_secret: slack-signing-secret-0456, bot_token: %q, api_url: %q }
    - { name: wrongbot, signing_secret: slack-signing-secret-0789, bot_token: %q, api_url: %q, bot_user_id: U0OTHER }
    - { name: offline, signing_secret: slack-signing-secret-0999, bot_token: %q, api_url: %q }
`, good, api, app, good, api, bad, api, good, api, good, closedURL(t)+"/api/"))
	_, lines, all := connectLines(t, conf)
	assert.Equal(t, "ok    slack/acme: auth.test ok: bot user U0BOT (signalgate) in team Acme (T0ACME)", lineOf(t, lines, "slack/acme"))
	assert.Equal(t, "ok    slack/sock socket mode: apps.connections.open ok", lineOf(t, lines, "slack/sock socket mode"))
	line := lineOf(t, lines, "slack/old")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), line)
	assert.Contains(t, line, "invalid_auth")
	assert.Contains(t, line, "check connectors.slack[2].bot_token")
	assert.Contains(t, lineOf(t, lines, "slack/wrongbot"), "connectors.slack[3].bot_user_id is U0OTHER: set it to U0BOT")
	assert.Contains(t, lineOf(t, lines, "slack/offline"), "Slack's Web API did not answer: check network access to slack.com (or connectors.slack[4].api_url)")
	for _, s := range []string{good, bad, app} {
		assert.NotContains(t, all, s)
	}
}

func TestCheckConnectWebhookTarget(t *testing.T) {
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method)
		if r.Method != http.MethodOptions {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(srv.Close)
	down := closedURL(t)
	conf := sqliteConf(t, "")
	conf = strings.Replace(conf, "agents: [ { id: coder, token: dev-only-coder-token } ]", fmt.Sprintf(`agents:
  - { id: coder, token: dev-only-coder-token }
  - { id: hook, token: webhook-agent-token-1, target: { kind: webhook, url: %q, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } }
  - { id: gone, token: webhook-agent-token-2, target: { kind: webhook, url: %q, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } }
`, srv.URL+"/hooks/secret-path-token", down+"/hooks/x"), 1)
	_, lines, all := connectLines(t, conf)
	assert.Equal(t, "ok    agent hook (webhook): OPTIONS "+srv.URL+"/… answered HTTP 200", lineOf(t, lines, "agent hook (webhook)"))
	assert.Equal(t, []string{http.MethodHead, http.MethodOptions}, methods, "HEAD, then OPTIONS; never a POST")
	line := lineOf(t, lines, "agent gone (webhook)")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), line)
	assert.Contains(t, line, "check agents[2].target.url")
	assert.NotContains(t, all, "secret-path-token")
}

func TestCheckConnectMastra(t *testing.T) {
	base := mastratest.Server(t, 0)
	down := closedURL(t)
	conf := sqliteConf(t, "")
	conf = strings.Replace(conf, "agents: [ { id: coder, token: dev-only-coder-token } ]", fmt.Sprintf(`agents:
  - { id: coder, token: dev-only-coder-token }
  - { id: support, target: { kind: mastra, url: %q, agent_id: interopAgent } }
  - { id: typo, target: { kind: mastra, url: %q, agent_id: noSuchAgent } }
  - { id: down, target: { kind: mastra, url: %q, agent_id: interopAgent } }
`, base, base, down), 1)
	_, lines, all := connectLines(t, conf)
	assert.Equal(t, "ok    agent support (mastra): agent interopAgent answers at "+base, lineOf(t, lines, "agent support (mastra)"))
	line := lineOf(t, lines, "agent typo (mastra)")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), line)
	assert.Contains(t, line, "check agents[2].target.agent_id")
	line = lineOf(t, lines, "agent down (mastra)")
	assert.True(t, strings.HasPrefix(line, "FAIL  "), all)
	assert.Contains(t, line, "check agents[3].target.url and that the Mastra server is running")
}
