package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack/webapitest"
)

// lockConfig routes billing events with a customer to that customer's thread, and
// gives an admin token.
const lockConfig = `
admin: { tokens: [ { name: ops, token: "cli-admin-token-0123456789", scopes: [read, write] } ] }
connectors:
  generic: [ { name: billing, secret: "` + billingSecret + `" } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: '{{index .Extra "customer"}}' }
`

// A second gateway process on a SQLite file another one serves is refused: it exits 1
// naming the file and the process holding it, and so does `migrate`; `check --connect`
// and `explain` read alongside. Once the holder is SIGKILLed a new one starts.
func TestSecondGatewayOnSQLiteRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gateway processes")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "gw.db")
	config := func(name string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 2s }
storage: { driver: sqlite, dsn: %q }
log: { level: warn, format: json }
agents: [ { id: coder, token: dev-only-coder-token } ]
`, db)+lockConfig), 0o600))
		return path
	}
	first, second := config("first.yaml"), config("second.yaml")
	holder := startGateway(t, first)

	refused := "sqlite database " + db + " is in use by process " + fmt.Sprint(holder.cmd.Process.Pid) + " on host "
	code, stdout, stderr := runGatewayProc(t, "serve", "--config", second)
	require.Equal(t, exitFail, code, stderr)
	require.NotContains(t, stdout, "listening on")
	require.Contains(t, stderr, refused)
	require.Contains(t, stderr, "lock file "+db+".lock")
	require.Contains(t, stderr, "run several replicas on PostgreSQL")

	code, _, stderr = runGatewayProc(t, "migrate", "--config", second)
	require.Equal(t, exitFail, code, stderr)
	require.Contains(t, stderr, refused)

	code, stdout, stderr = runGatewayProc(t, "check", "--connect", "--config", second)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "ok    database: sqlite "+db+" reachable, migrations applied")

	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_1"},"body":{"kind":"invoice-failed","summary":"Invoice 7 failed","attributes":{"customer":"acme"}}}`), 0o600))
	code, stdout, stderr = runGatewayProc(t, "explain", "--config", second, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "notification: coder/billing/acme (route billing)")
	require.NotContains(t, stderr, "in use")

	holder.kill() // SIGKILL: the lock goes with the process
	startGateway(t, second)
}

// After a SIGKILL on SQLite the restarted gateway sends the reply the dead one was
// sending at once: with replies.lease at an hour, waiting out the lease would hold it
// back for that hour. It is looked for on Slack first (it may have been posted), then
// posted once.
func TestReplyGoesOutRightAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a gateway process")
	}
	api := webapitest.New(t)
	// The first chat.postMessage never reaches Slack: it hangs until its process dies,
	// so the process is killed holding the reply's lease, mid-send.
	upstream, err := url.Parse(api.APIURL())
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(upstream)
	sending, ended := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat.postMessage") && held.CompareAndSwap(false, true) {
			// Read to the end: only then does the server notice the client going away.
			_, _ = io.Copy(io.Discard, r.Body)
			close(sending)
			select {
			case <-r.Context().Done():
			case <-ended:
			}
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(ended) })

	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	conf := repliesConfig(fmt.Sprintf("127.0.0.1:%d", freePort(t)), "sqlite", filepath.Join(dir, "gw.db"), front.URL+"/")
	conf = strings.Replace(conf, "replies: { lease: 2s,", "replies: { lease: 1h,", 1)
	require.Contains(t, conf, "replies: { lease: 1h,")
	require.NoError(t, os.WriteFile(cfg, []byte(conf), 0o600))
	p := startGateway(t, cfg)

	code, out := postSlack(t, p.url, slackEvent(t, "EvDM1", map[string]any{"type": "message", "user": "U0JANE",
		"text": "is the build green?", "ts": "1700000000.000100", "team": "T0001", "channel": "D0JANE",
		"event_ts": "1700000000.000100", "channel_type": "im"}))
	require.Equal(t, http.StatusOK, code, out)
	thread := "/v1/agents/support/threads/" + url.PathEscape("slack:T0001") + "/" + url.PathEscape("dm:U0JANE")
	require.Equal(t, http.StatusAccepted, agentCall(t, http.MethodPost, p.url+thread+"/replies",
		map[string]any{"id": "answer-1", "text": "Yes, green."}, nil))
	select {
	case <-sending:
	case <-time.After(procWait):
		t.Fatal("the reply was never sent")
	}
	p.kill()

	startGateway(t, cfg)
	// Bounded well under the hour the lease would hold it; normally a poll interval.
	deadline := time.After(procWait)
	for {
		select {
		case c := <-api.Calls:
			if c.Method != "chat.postMessage" {
				continue
			}
			require.Equal(t, "D0JANE", c.Form.Get("channel"))
			require.Contains(t, c.Form.Get("metadata"), "answer-1")
			require.Len(t, api.Posted("D0JANE"), 1, "posted once")
			return
		case <-deadline:
			t.Fatalf("the restarted gateway did not send the reply within %s (its lease runs an hour)", procWait)
		}
	}
}
