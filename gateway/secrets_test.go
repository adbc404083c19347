package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// Secrets fed through every connector and API; none may come back out.
const (
	secretGitHub    = "gh-hook-SENTINEL-1a2b3c4d"
	secretGitHubWas = "gh-hook-previous-SENTINEL-5e6f" // the previous secret of a rotation
	secretSlack     = "slack-signing-SENTINEL-5e6f7a8b"
	secretGeneric   = "SENTINEL-generic-whsec-key" // the whsec_ secret's decoded bytes
	secretIMAP      = "imap-pass-SENTINEL-9c0d1e2f"
	secretAgent     = "agent-token-SENTINEL-3a4b5c"
	secretAdmin     = "admin-token-SENTINEL-6d7e8f"
	slackTimestamp  = "X-Slack-Request-Timestamp"
)

func genericSecret() string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(secretGeneric))
}

// logSink is the whole gateway's log output; waiters are woken on every write.
type logSink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLogSink() *logSink { return &logSink{changed: make(chan struct{}, 1)} }

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor blocks until the log holds every part on one line.
func (s *logSink) waitFor(t *testing.T, parts ...string) {
	t.Helper()
	guard := time.After(30 * time.Second) // hang guard only
	for {
		for _, line := range strings.Split(s.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				return
			}
		}
		select {
		case <-s.changed:
		case <-guard:
			t.Fatalf("no log line with %q in:\n%s", parts, s.String())
		}
	}
}

// fakeIMAP serves one user whose password is not the configured one, so every
// login attempt carries the secret and fails.
func fakeIMAP(t *testing.T) string {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("gw", "the-real-password")
	require.NoError(t, user.Create("INBOX", nil))
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// transcript collects everything the gateway said back.
type transcript struct {
	t   *testing.T
	url string
	out strings.Builder
}

func (tr *transcript) request(method, path string, body []byte, headers map[string]string) int {
	tr.t.Helper()
	req, err := http.NewRequest(method, tr.url+path, bytes.NewReader(body))
	require.NoError(tr.t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tr.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(&tr.out, "%s %s → %d %v\n%s\n", method, path, resp.StatusCode, resp.Header, raw)
	return resp.StatusCode
}

func hmacHex(secret, msg []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(msg)
	return hex.EncodeToString(mac.Sum(nil))
}

func TestSecretsNeverLeak(t *testing.T) {
	imapAddr := fakeIMAP(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
admin: { tokens: [ { name: ops, token: %q, scopes: [read, write] } ] }
agents: [ { id: coder, token: %q } ]
connectors:
  github: [ { name: acme, secrets: [%q, %q] } ]
  slack: [ { name: acme, signing_secret: %q, bot_user_id: U0BOT } ]
  generic: [ { name: billing, secret: %q } ]
  email: [ { name: support, addr: %q, tls: false, username: gw, password: %q, idle: false } ]
routes:
  - name: all
    match: { source: [github, slack, generic, email] }
    thread: { agent: coder, resource: "{{.Source}}", thread: "{{.Connector}}" }
`, filepath.Join(dir, "gw.db"), secretAdmin, secretAgent, secretGitHub, secretGitHubWas, secretSlack, genericSecret(), imapAddr, secretIMAP)), 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	logs := newLogSink()
	m := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()
	tr := &transcript{t: t, url: "http://" + m.Addr().String()}

	// IMAP: the poller logs in with the password and is refused.
	logs.waitFor(t, `"component":"connector_email"`, "imap session ended", `login as \"gw\"`)

	// GitHub: a signed delivery and a forged one.
	gh := []byte(`{"action":"created","issue":{"number":7,"title":"Flaky test"},"comment":{"body":"looks off","user":{"login":"jane"},"author_association":"MEMBER"},"repository":{"full_name":"acme/api"},"sender":{"login":"jane"}}`)
	ghHeaders := func(sig string) map[string]string {
		return map[string]string{"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d-1", "Content-Type": "application/json", "X-Hub-Signature-256": sig}
	}
	require.Equal(t, http.StatusOK, tr.request("POST", "/webhooks/github/acme", gh, ghHeaders("sha256="+hmacHex([]byte(secretGitHub), gh))))
	require.Equal(t, http.StatusUnauthorized, tr.request("POST", "/webhooks/github/acme", gh, ghHeaders("sha256="+hmacHex([]byte(secretGitHub+"x"), gh))))
	ghWas := ghHeaders("sha256=" + hmacHex([]byte(secretGitHubWas), gh))
	ghWas["X-GitHub-Delivery"] = "d-2"
	require.Equal(t, http.StatusOK, tr.request("POST", "/webhooks/github/acme", gh, ghWas), "the previous secret of the rotation")

	// Slack: url_verification, an event, and a forged request.
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	slackSig := func(secret string, body []byte) map[string]string {
		return map[string]string{slackTimestamp: ts, "X-Slack-Signature": "v0=" + hmacHex([]byte(secret), []byte("v0:"+ts+":"+string(body))), "Content-Type": "application/json"}
	}
	verify := []byte(`{"type":"url_verification","challenge":"chal-123"}`)
	require.Equal(t, http.StatusOK, tr.request("POST", "/webhooks/slack/acme", verify, slackSig(secretSlack, verify)))
	mention := []byte(`{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@U0BOT> hi","ts":"1.2","channel":"C1","event_ts":"1.2"}}`)
	require.Equal(t, http.StatusOK, tr.request("POST", "/webhooks/slack/acme", mention, slackSig(secretSlack, mention)))
	require.Equal(t, http.StatusUnauthorized, tr.request("POST", "/webhooks/slack/acme", mention, slackSig("wrong", mention)))

	// Generic: a signed delivery and a forged one.
	key, err := stdwebhooks.ParseSecret(genericSecret())
	require.NoError(t, err)
	body := []byte(`{"kind":"invoice-failed","summary":"Invoice 9 failed"}`)
	now := time.Now()
	genHeaders := func(sig string) map[string]string {
		return map[string]string{stdwebhooks.HeaderID: "msg_1", stdwebhooks.HeaderTimestamp: strconv.FormatInt(now.Unix(), 10), stdwebhooks.HeaderSignature: sig}
	}
	require.Equal(t, http.StatusOK, tr.request("POST", "/webhooks/generic/billing", body, genHeaders(stdwebhooks.Sign(key, "msg_1", now, body))))
	require.Equal(t, http.StatusUnauthorized, tr.request("POST", "/webhooks/generic/billing", body, genHeaders(stdwebhooks.Sign([]byte("nope"), "msg_1", now, body))))

	// Agent API with its token, a near miss, and another agent's path.
	agentAuth := map[string]string{"Authorization": "Bearer " + secretAgent, "Content-Type": "application/json"}
	require.Equal(t, http.StatusCreated, tr.request("POST", "/v1/agents/coder/threads/r/t/notifications", []byte(`{"kind":"x","summary":"y"}`), agentAuth))
	require.Equal(t, http.StatusOK, tr.request("GET", "/v1/agents/coder/threads/r/t/notifications?markSeen=false", nil, agentAuth))
	require.Equal(t, http.StatusUnauthorized, tr.request("GET", "/v1/agents/coder/threads/r/t/notifications", nil, map[string]string{"Authorization": "Bearer " + secretAgent[:len(secretAgent)-1]}))
	require.Equal(t, http.StatusNotFound, tr.request("GET", "/v1/agents/other/threads/r/t/notifications", nil, agentAuth))

	// Admin API: every listing, explain, replay; a near-miss token.
	adminAuth := map[string]string{"Authorization": "Bearer " + secretAdmin, "Content-Type": "application/json"}
	for _, p := range []string{"/admin/v1/events", "/admin/v1/notifications", "/admin/v1/threads", "/admin/v1/deliveries", "/admin/v1/connectors"} {
		require.Equal(t, http.StatusOK, tr.request("GET", p, nil, adminAuth), p)
	}
	sample := []byte(`{"source":"github","connector":"acme","headers":{"X-GitHub-Event":"issue_comment"},"body":` + string(gh) + `}`)
	require.Equal(t, http.StatusOK, tr.request("POST", "/admin/v1/explain", sample, adminAuth))
	require.Equal(t, http.StatusOK, tr.request("POST", "/admin/v1/events/replay?source=github", nil, adminAuth))
	require.Equal(t, http.StatusUnauthorized, tr.request("GET", "/admin/v1/events", nil, map[string]string{"Authorization": "Bearer " + secretAdmin + "0"}))
	require.Equal(t, http.StatusOK, tr.request("GET", "/metrics", nil, nil))
	require.Equal(t, http.StatusOK, tr.request("GET", "/openapi.json", nil, nil))
	require.Contains(t, tr.out.String(), `"lastError":"login as \"gw\"`, "the IMAP failure is visible to operators")

	// The command line: check, explain offline, and clients with wrong tokens.
	var cli strings.Builder
	for _, args := range [][]string{
		{"check", "--config", path},
		{"explain", "--config", path, "--event", "nope"},
		{"replay", "--url", tr.url, "--token", secretAdmin + "x", "some-id"},
		{"send", "--url", tr.url, "--token", secretAgent + "x", "--agent", "coder", "--resource", "r", "--thread", "t", "--kind", "k", "--summary", "s"},
		{"tail", "--url", tr.url, "--token", secretAgent + "x", "--agent", "coder", "--resource", "r", "--thread", "t"},
	} {
		code, stdout, stderr := runCLI(t, nil, args...)
		fmt.Fprintf(&cli, "%v → %d\n%s\n%s\n", args[0], code, stdout, stderr)
	}
	require.Contains(t, cli.String(), "HTTP 401 unauthorized")

	logs.waitFor(t, `"component":"connector_github"`, "signature rejected")
	logs.waitFor(t, `"component":"connector_generic"`, "signature rejected")
	for name, where := range map[string]string{"logs": logs.String(), "responses": tr.out.String(), "command line": cli.String()} {
		for _, secret := range []string{secretGitHub, secretGitHubWas, secretSlack, secretGeneric, genericSecret(), secretIMAP, secretAgent, secretAdmin, "SENTINEL"} {
			require.NotContains(t, where, secret, "a secret in the %s", name)
		}
	}
}
