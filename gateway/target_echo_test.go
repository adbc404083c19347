package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A webhook target whose URL path and header hold its credentials answers every delivery
// as Express does for an unknown route, 404 "Cannot POST /hooks/<token>", and repeats the
// header: neither credential comes back in the stored attempt, the admin API (read
// scope), the console's pages or the log, for a dispatched record and for a signal sent
// through the agent API alike.
func TestTargetCredentialsNeverComeBackInAnEcho(t *testing.T) {
	const (
		pathSecret   = "PATHSENTINEL-4b1d9e"
		headerSecret = "HDRSENTINEL-77c2a0"
		readToken    = "echo-read-token-0123456789"
		agentToken   = "echo-agent-token-0123456789"
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><pre>Cannot POST %s</pre><p>key %s</p></body></html>\n",
			r.URL.Path, r.Header.Get("X-Hook-Key"))
	}))
	defer hook.Close()

	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
admin: { tokens: [ { name: reader, token: %q, scopes: [read] } ] }
agents:
  - id: hooky
    token: %q
    target: { kind: webhook, url: %q, secret: %q, headers: { X-Hook-Key: %q } }
`, filepath.Join(dir, "gw.db"), readToken, agentToken, hook.URL+"/hooks/"+pathSecret, outageSecret, headerSecret)), 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	logs := newLogSink()
	m := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()
	tr := &transcript{t: t, url: "http://" + m.Addr().String()}

	agentAuth := map[string]string{"Authorization": "Bearer " + agentToken, "Content-Type": "application/json"}
	require.Equal(t, http.StatusCreated, tr.request("POST", "/v1/agents/hooky/threads/r/t/notifications",
		[]byte(`{"kind":"deploy","summary":"Deploy failed","priority":"high"}`), agentAuth))
	logs.waitFor(t, `"msg":"delivery failed"`, `"outcome":"failed"`, "HTTP 404")
	require.Equal(t, http.StatusBadGateway, tr.request("POST", "/v1/agents/hooky/threads/r/t2/signals",
		[]byte(`{"signal":{"type":"user","contents":"hello"}}`), agentAuth))
	logs.waitFor(t, `"msg":"deliver signal"`, "HTTP 404")

	// The admin API with a read token: the record, its attempts, the attempt log.
	readAuth := map[string]string{"Authorization": "Bearer " + readToken}
	var page struct {
		Notifications []struct {
			ID        string `json:"id"`
			LastError string `json:"lastError"`
		} `json:"notifications"`
	}
	require.Equal(t, http.StatusOK, getJSON(t, m, "GET", "/admin/v1/notifications?agent=hooky", readToken, nil, &page))
	require.Len(t, page.Notifications, 1)
	rec := page.Notifications[0]
	require.Contains(t, rec.LastError, "HTTP 404: <!DOCTYPE html>", "the answer's excerpt stays useful")
	require.Contains(t, rec.LastError, "Cannot POST …")
	for _, p := range []string{"/admin/v1/notifications?agent=hooky", "/admin/v1/notifications/" + rec.ID,
		"/admin/v1/deliveries", "/admin/v1/targets", "/admin/v1/threads"} {
		require.Equal(t, http.StatusOK, tr.request("GET", p, nil, readAuth), p)
	}
	require.Contains(t, tr.out.String(), `"error":"POST `+hook.URL+`/…: HTTP 404`, "the stored attempt is in the transcript")

	// The console, signed in with the read token.
	ck := consoleSignIn(t, tr.url, readToken)
	var pages strings.Builder
	for _, p := range []string{"/console/notifications/" + rec.ID, "/console/deliveries", "/console/thread?agent=hooky&resource=r&thread=t"} {
		status, body := consoleGet(t, tr.url+p, ck)
		require.Equal(t, http.StatusOK, status, p)
		pages.WriteString(body)
	}
	require.Contains(t, pages.String(), "Cannot POST …", "the console shows the stored excerpt")

	for name, where := range map[string]string{"logs": logs.String(), "responses": tr.out.String(), "console": pages.String()} {
		for _, secret := range []string{pathSecret, headerSecret, "SENTINEL", "/hooks/"} {
			require.NotContains(t, where, secret, "a target credential in the %s", name)
		}
	}
}

// consoleSignIn signs in to the console with token and returns its session cookie.
func consoleSignIn(t *testing.T, base, token string) *http.Cookie {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/console/signin", strings.NewReader(url.Values{"token": {token}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	return cookies[0]
}

func consoleGet(t *testing.T, u string, ck *http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(ck)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}
