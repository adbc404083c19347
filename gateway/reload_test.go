package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	reloadOpsToken    = "ops-token-0123456789"
	reloadViewerToken = "viewer-token-0123456789"
	// reloadSecret replaces billingSecret in the reloaded file.
	reloadSecret = "whsec_cmVsb2FkLXNlY3JldC0wMTIzNDU2Nzg5YWI="
)

// writeReloadConfig writes a gateway config on storage (a YAML flow mapping) with an
// admin token per scope, the coder agent, and extra.
func writeReloadConfig(t *testing.T, path, storage, extra string) {
	t.Helper()
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: %s
log: { level: debug, format: json }
admin:
  tokens:
    - { name: ops, token: %q, scopes: [read, write] }
    - { name: viewer, token: %q, scopes: [read] }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, storage, reloadOpsToken, reloadViewerToken, extra)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
}

func sqliteStorage(dir string) string {
	return fmt.Sprintf("{ driver: sqlite, dsn: %q }", filepath.Join(dir, "data", "gw.db"))
}

// billingRoutedTo is the billing connector with secret, routed to the coder's thread.
func billingRoutedTo(secret, thread, policy string) string {
	return fmt.Sprintf(`
connectors:
  generic: [ { name: billing, secret: %q } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: %s }
%s`, secret, thread, policy)
}

// startReloadable starts a gateway from the file at path, as serve does.
func startReloadable(t *testing.T, path string) *Gateway {
	t.Helper()
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	m.ConfigPath, m.Lookup = path, noEnv
	m.TestSignals.Reloaded.Init()
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// postReload asks m for a reload with token; it answers the status and the body.
func postReload(t *testing.T, m *Gateway, token string) (int, string) {
	t.Helper()
	var out map[string]any
	code := getJSON(t, m, http.MethodPost, "/-/reload", token, nil, &out)
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	return code, string(raw)
}

func scrapeMetrics(t *testing.T, m *Gateway) string {
	t.Helper()
	return get(t, "http://"+m.Addr().String()+"/metrics", "")
}

// postSigned posts a Standard Webhooks delivery to the billing connector signed with secret.
func postSigned(t *testing.T, m *Gateway, secret, id string, body []byte) int {
	t.Helper()
	return postSignedTo(t, "http://"+m.Addr().String(), secret, id, body)
}

// postSignedTo is postSigned to the gateway at base.
func postSignedTo(t *testing.T, base, secret, id string, body []byte) int {
	t.Helper()
	key, err := stdwebhooks.ParseSecret(secret)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/generic/billing", bytes.NewReader(body))
	require.NoError(t, err)
	ts := time.Now()
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", stdwebhooks.Sign(key, id, ts, body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// openStream follows a thread's stream and hands over its signal frames; the stream
// stays open until the test ends.
func openStream(t *testing.T, m *Gateway, path string) <-chan map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.Addr().String()+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer dev-only-coder-token")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	frames := make(chan map[string]any, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "signal":
				var f map[string]any
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f) == nil {
					frames <- f
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return frames
}

func nextFrame(t *testing.T, frames <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case f, ok := <-frames:
		require.True(t, ok, "the stream ended")
		return f
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("no signal on the stream")
		return nil
	}
}

// TestReloadSwapsRoutesPolicyAndSecretsLive: after POST /-/reload, a delivery signed with
// the new secret is accepted and the old secret refused, events go where the new routes
// say and are decided by the new policy, and a stream opened before the reload stays
// open and receives the record the new route sent to it.
func TestReloadSwapsRoutesPolicyAndSecretsLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", ""))
	m := startReloadable(t, path)
	require.Contains(t, scrapeMetrics(t, m), "signalgate_config_last_reload_successful 1")

	// A stream on the thread only the new routes reach, opened before the reload.
	frames := openStream(t, m, "/v1/agents/coder/threads/billing/payments/stream")
	require.Equal(t, http.StatusOK, postSigned(t, m, billingSecret, "msg_before", []byte(`{"kind":"invoice-failed","summary":"before"}`)))

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(reloadSecret, "payments",
		`policy: { rules: [ { match: { kind: noise }, action: discard } ] }
schedules: [ { id: nightly, agent: coder, resource_id: billing, thread_id: payments, cron: "0 3 * * *", contents: "nightly run" } ]`))
	// The agent's token changes too: the stream opened with the old one stays open.
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(mustRead(t, path),
		"token: dev-only-coder-token", "token: dev-only-coder-token-rotated", 1)), 0o600))
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"status":"reloaded"}`, body)

	require.Equal(t, http.StatusUnauthorized, postSigned(t, m, billingSecret, "msg_old", []byte(`{"kind":"invoice-failed","summary":"old secret"}`)),
		"the old secret is refused once the new one is in force")
	require.Equal(t, http.StatusOK, postSigned(t, m, reloadSecret, "msg_new", []byte(`{"kind":"invoice-failed","summary":"after reload"}`)))
	f := nextFrame(t, frames)
	require.Contains(t, f["xml"], "after reload", "the stream opened before the reload got the record the new route sent")

	require.Equal(t, http.StatusOK, postSigned(t, m, reloadSecret, "msg_noise", []byte(`{"kind":"noise","summary":"noise"}`)))
	metrics := scrapeMetrics(t, m)
	require.Contains(t, metrics, `signalgate_decisions_total{action="discard"} 1`, "the new policy decided the noise")
	require.Contains(t, metrics, "signalgate_config_last_reload_successful 1")
	require.Contains(t, metrics, `signalgate_stream_subscribers 1`, "the stream is still open")

	for token, want := range map[string]int{"dev-only-coder-token": http.StatusUnauthorized, "dev-only-coder-token-rotated": http.StatusOK} {
		require.Equal(t, want, getJSON(t, m, http.MethodGet, "/v1/agents/coder/threads/billing/payments/notifications", token, nil, nil), token)
	}
	require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/schedules/nightly", reloadOpsToken, nil, nil), "the file's new schedule is a row")
}

// TestReloadRefusesWhatCannotChangeLive: an invalid file, a changed server.listen or
// storage.dsn, and a caller without the write scope are refused; the running config
// stays in force and the metric says the last reload failed until one succeeds.
func TestReloadRefusesWhatCannotChangeLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	good := billingRoutedTo(billingSecret, "invoices", "")
	writeReloadConfig(t, path, sqliteStorage(dir), good)
	m := startReloadable(t, path)

	code, body := postReload(t, m, reloadViewerToken)
	require.Equal(t, http.StatusForbidden, code, body)
	code, _ = postReload(t, m, "")
	require.Equal(t, http.StatusUnauthorized, code)

	// A route to an agent that does not exist, with the new secret: nothing of it applies.
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(reloadSecret, "invoices", "")+
		"  - { name: ghost, match: { source: generic }, thread: { agent: nobody, resource: r, thread: t } }\n")
	code, body = postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "routes[1]")
	require.Contains(t, body, "nobody")
	require.ErrorContains(t, <-m.TestSignals.Reloaded.C(), "routes[1]")
	metrics := scrapeMetrics(t, m)
	require.Contains(t, metrics, "signalgate_config_last_reload_successful 0")
	require.Equal(t, http.StatusOK, postSigned(t, m, billingSecret, "msg_1", []byte(`{"kind":"a","summary":"still the running config"}`)))
	require.Equal(t, http.StatusUnauthorized, postSigned(t, m, reloadSecret, "msg_2", []byte(`{"kind":"a","summary":"new secret"}`)))

	// server.listen and storage.dsn: the listener and the database stay; both are named.
	writeReloadConfig(t, path, sqliteStorage(filepath.Join(dir, "other")), good)
	moved := strings.Replace(mustRead(t, path), `listen: "127.0.0.1:0"`, `listen: "127.0.0.1:1"`, 1)
	require.NoError(t, os.WriteFile(path, []byte(moved), 0o600))
	code, body = postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "server.listen: cannot change while the gateway runs")
	require.Contains(t, body, "storage.dsn: cannot change while the gateway runs")
	require.NotContains(t, body, filepath.Join(dir, "other"), "values are not echoed")
	require.Error(t, <-m.TestSignals.Reloaded.C())

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(reloadSecret, "invoices", ""))
	code, body = postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, <-m.TestSignals.Reloaded.C())
	require.Contains(t, scrapeMetrics(t, m), "signalgate_config_last_reload_successful 1")
	require.Equal(t, http.StatusOK, postSigned(t, m, reloadSecret, "msg_3", []byte(`{"kind":"a","summary":"new secret"}`)))
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

// TestReloadFollowsOnEveryReplica: two replicas on one PostgreSQL, each with its own
// file; a reload on the first makes the second re-read its file.
func TestReloadFollowsOnEveryReplica(t *testing.T) {
	dsn := os.Getenv(storetest.PostgresEnv)
	if dsn == "" {
		t.Skip(storetest.PostgresEnv + " not set")
	}
	st := storetest.PostgresConfig(t, dsn)
	storage := fmt.Sprintf("{ driver: postgres, dsn: %q }", st.DSN)
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")}
	replicas := make([]*Gateway, len(paths))
	for i, p := range paths {
		writeReloadConfig(t, p, storage, billingRoutedTo(billingSecret, "invoices", ""))
		replicas[i] = startReloadable(t, p)
	}
	for _, p := range paths {
		writeReloadConfig(t, p, storage, billingRoutedTo(reloadSecret, "invoices", ""))
	}
	code, body := postReload(t, replicas[0], reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, <-replicas[0].TestSignals.Reloaded.C())
	select {
	case err := <-replicas[1].TestSignals.Reloaded.C():
		require.NoError(t, err, "the second replica re-read its own file")
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("the second replica did not follow the reload")
	}
	require.Equal(t, http.StatusOK, postSigned(t, replicas[1], reloadSecret, "msg_b", []byte(`{"kind":"a","summary":"on b"}`)))
	require.Equal(t, http.StatusUnauthorized, postSigned(t, replicas[1], billingSecret, "msg_b_old", []byte(`{"kind":"a","summary":"old"}`)))
	require.Contains(t, scrapeMetrics(t, replicas[1]), "signalgate_config_last_reload_successful 1")
}

// TestServeReloadsOnSIGHUP: the serve command re-reads its file on SIGHUP (which must not
// end it, as SIGHUP's default would) and still stops cleanly on SIGTERM.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", ""))
	cmd := exec.Command(gatewayBinary(t), "serve", "--config", path)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	logs := make(chan string, 1024)
	go func() {
		defer close(logs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs <- sc.Text()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	_, base, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(reloadSecret, "invoices", ""))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitLog(t, logs, `"msg":"config reloaded"`)
	require.Equal(t, http.StatusOK, postSignedTo(t, base, reloadSecret, "msg_hup", []byte(`{"kind":"a","summary":"after SIGHUP"}`)))
	require.Equal(t, http.StatusUnauthorized, postSignedTo(t, base, billingSecret, "msg_hup_old", []byte(`{"kind":"a","summary":"old"}`)))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitLog(t, logs, `"msg":"stopped"`)
	for range logs { // drain, so the process can finish writing
	}
	require.NoError(t, cmd.Wait(), "exit status 0")
}

// waitLog reads log lines until one contains want.
func waitLog(t *testing.T, logs <-chan string, want string) {
	t.Helper()
	timeout := time.After(procWait) // only bounds a broken test
	for {
		select {
		case l, ok := <-logs:
			require.True(t, ok, "the gateway exited before logging %s", want)
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no log line with %s", want)
		}
	}
}

// TestReloadKeepsConsoleSessions: without console.session_key the key is random per
// process, not per config: a reload does not sign everyone out of the console.
func TestReloadKeepsConsoleSessions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", ""))
	m := startReloadable(t, path)
	base := "http://" + m.Addr().String()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(base+"/console/signin", url.Values{"token": {reloadOpsToken}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cookies := resp.Cookies()
	require.NotEmpty(t, cookies)
	threads := func() int {
		req, err := http.NewRequest(http.MethodGet, base+"/console/threads", nil)
		require.NoError(t, err)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := noFollow.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, threads())

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(reloadSecret, "invoices", ""))
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, http.StatusOK, threads(), "the session signed in before the reload is still valid")
}
