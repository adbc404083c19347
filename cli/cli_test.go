package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/gateway"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	cliAdminToken = "cli-admin-token-0123456789"
	cliAgentToken = "dev-only-coder-token"
)

// cliConfig routes billing events with a customer to that customer's thread; events
// without one render no thread and stay unrouted.
const cliConfig = `
admin: { tokens: [ { name: ops, token: "` + cliAdminToken + `", scopes: [read, write] } ] }
connectors:
  generic: [ { name: billing, secret: "` + billingSecret + `" } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: '{{index .Extra "customer"}}' }
`

// startMainAt runs a gateway from a config written in dir and returns its config path.
func startMainAt(t *testing.T, dir, extra string) (*gateway.Gateway, string) {
	t.Helper()
	path := writeConfig(t, dir, extra)
	cfg, err := gateway.LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := gateway.New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m, path
}

// run is Run for a development build.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	return Run(ctx, args, stdout, stderr, lookup, "dev")
}

// runCLI runs a subcommand in process.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = run(context.Background(), args, &out, &errOut, lookup)
	return code, out.String(), errOut.String()
}

func TestCLIHelpShowsAnExample(t *testing.T) {
	for _, cmd := range []string{"check", "explain", "replay", "send", "tail", "runs finish", "slack manifest", "github webhook"} {
		code, stdout, stderr := runCLI(t, nil, append(strings.Fields(cmd), "--help")...)
		require.Equal(t, exitOK, code, cmd)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "Usage: gateway "+cmd, cmd)
		require.Contains(t, stderr, "Example:\n  ", cmd)
		require.Contains(t, stderr, "gateway "+cmd+" --", cmd, "the example runs the command")
	}
	code, stdout, _ := runCLI(t, nil, "help")
	require.Equal(t, exitOK, code)
	for _, cmd := range []string{"check", "explain", "replay", "send", "tail", "runs finish", "slack manifest", "github webhook"} {
		require.Contains(t, stdout, "\n  "+cmd+" ")
	}
}

func TestCLIUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"send", "--agent", "coder"}, "gateway send: --resource: required"},
		{[]string{"send", "--agent", "a", "--resource", "r", "--thread", "t", "--kind", "k", "--summary", "s"}, "gateway send: --token: required"},
		{[]string{"send", "--token", "x", "--agent", "a", "--resource", "r", "--thread", "t", "--kind", "k", "--summary", "s", "--priority", "p9"}, "--priority: unknown priority"},
		{[]string{"tail", "--token", "x", "--url", "ftp://x", "--agent", "a", "--resource", "r", "--thread", "t"}, `--url: want http(s)://host:port, got "ftp://x"`},
		{[]string{"replay", "--token", "x", "--status", "unrouted", "some-id"}, "give event ids or filters, not both"},
		{[]string{"explain", "a.json", "b.json"}, "Usage: gateway explain"},
	} {
		code, _, stderr := runCLI(t, nil, c.args...)
		require.Equal(t, exitConfig, code, c.args)
		require.Contains(t, stderr, c.msg, c.args)
	}
}

func TestExplainCommandOffline(t *testing.T) {
	dir := t.TempDir()
	m, cfgPath := startMainAt(t, dir, cliConfig)
	// Low priority: held for a summary, so the record stays pending whatever the
	// dispatcher does meanwhile.
	body := []byte(`{"kind":"invoice-failed","summary":"Invoice 7 failed","priority":"low","coalesceKey":"inv","attributes":{"customer":"acme"}}`)
	code, out := postGeneric(t, m, "msg_1", body, true)
	require.Equal(t, http.StatusOK, code, out)
	eventID := out["eventId"].(string)

	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_2"},"body":`+string(body)+`}`), 0o600))
	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	recs, _, err := store.NewAdmin(m.Store).ListRecords(context.Background(), inbox.RecordFilter{EventID: eventID})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Regexp(t, `^event:        generic/billing invoice-failed delivery msg_2
at:           \S+
status:       routed
item 0:       invoice-failed, low: "Invoice 7 failed"
              fields: connector=billing extra.customer=acme kind=invoice-failed source=generic
routes:
  billing     matches → coder/billing/acme
notification: coder/billing/acme \(route billing\)
  presence:   idle
  inbox:      merges into pending record `+recs[0].ID+` \(same coalesceKey\), coalescedCount 1 → 2
  decision:   summarize — default: low priority, thread idle → held for a summary, never wakes
$`, stdout)

	// A stored event by id, as JSON.
	code, stdout, stderr = runCLI(t, nil, "explain", "--config", cfgPath, "--json", "--event", eventID)
	require.Equal(t, exitOK, code, stderr)
	var x admin.Explanation
	require.NoError(t, json.Unmarshal([]byte(stdout), &x))
	require.Equal(t, eventID, x.Event.ID)
	require.Len(t, x.Notifications, 1)

	code, _, stderr = runCLI(t, nil, "explain", "--config", cfgPath, "--event", "nope")
	require.Equal(t, exitConfig, code)
	require.Equal(t, "gateway explain: event \"nope\" not found\n", stderr)
}

// TestExplainUnmigrated: explain without a database creates none, and on a database
// never migrated explains against an empty inbox (and says so), or migrates first with
// --migrate.
func TestExplainUnmigrated(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, cliConfig)
	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_1"},"body":{"kind":"invoice-failed","summary":"Invoice 7 failed","attributes":{"customer":"acme"}}}`), 0o600))
	cfg, err := gateway.LoadConfig(cfgPath, noEnv)
	require.NoError(t, err)

	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "gateway explain: no database at "+filepath.Join(dir, "data", "gw.db"))
	require.Contains(t, stdout, "notification: coder/billing/acme (route billing)")
	require.NoDirExists(t, filepath.Join(dir, "data"), "explain writes nothing")

	st, err := store.Open(context.Background(), cfg.Storage, storetest.Logger(t)) // a database never migrated
	require.NoError(t, err)
	require.NoError(t, st.Close())
	code, stdout, stderr = runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "the database is not migrated")
	require.Contains(t, stdout, "notification: coder/billing/acme (route billing)")
	require.Contains(t, stdout, "inbox:      creates a new medium record")

	code, _, stderr = runCLI(t, nil, "explain", "--config", cfgPath, "--event", "ev_1")
	require.Equal(t, exitConfig, code)
	require.Contains(t, stderr, `event "ev_1" not found`)

	code, stdout, stderr = runCLI(t, nil, "explain", "--config", cfgPath, "--migrate", sample)
	require.Equal(t, exitOK, code, stderr)
	require.NotContains(t, stderr, "not migrated")
	require.Contains(t, stdout, "inbox:      creates a new medium record")
	st, err = store.Open(context.Background(), cfg.Storage, storetest.Logger(t))
	require.NoError(t, err)
	defer st.Close()
	current, err := st.Current(context.Background())
	require.NoError(t, err)
	require.True(t, current, "--migrate applied the migrations")
}

func TestReplayCommand(t *testing.T) {
	m, _ := startMainAt(t, t.TempDir(), cliConfig)
	url := "http://" + m.Addr().String()
	code, out := postGeneric(t, m, "msg_1", []byte(`{"kind":"payout","summary":"no customer"}`), true)
	require.Equal(t, http.StatusAccepted, code, out)
	unrouted := out["eventId"].(string)
	env := map[string]string{envURL: url, envAdminToken: cliAdminToken}

	code, stdout, stderr := runCLI(t, env, "replay", unrouted)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `^`+unrouted+` → \S+  unrouted  0 record\(s\)  \(route "billing": thread.thread rendered empty\)\nreplayed 1 event\(s\)\n$`, stdout)

	code, stdout, stderr = runCLI(t, env, "replay", "--status", "unrouted", "--limit", "1", "--all")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, unrouted+" → ")
	require.Contains(t, stdout, "replayed 1 event(s), skipped 1 replay(s) (--replays includes them)\n")

	code, _, stderr = runCLI(t, map[string]string{envURL: url, envAdminToken: "wrong-token-0123456789"}, "replay", unrouted)
	require.Equal(t, exitFail, code)
	require.Equal(t, "gateway replay: "+unrouted+": HTTP 401 unauthorized: missing or invalid credentials\n", stderr)
	code, _, stderr = runCLI(t, env, "replay", "nope")
	require.Equal(t, exitFail, code)
	require.Contains(t, stderr, `HTTP 400 bad_request: id: "nope" is not a valid id (want a UUID)`)
	unknown := "01a2030d-9733-7822-bce0-6d25cd55022c"
	code, _, stderr = runCLI(t, env, "replay", unknown)
	require.Equal(t, exitFail, code)
	require.Contains(t, stderr, `HTTP 404 not_found: event "`+unknown+`" not found`)
}

// lineReader hands out a command's output line by line as it is written.
type lineReader struct {
	r     *io.PipeReader
	w     *io.PipeWriter
	lines chan string
}

func newLineReader() *lineReader {
	r, w := io.Pipe()
	lr := &lineReader{r: r, w: w, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
	}()
	return lr
}

func (lr *lineReader) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-lr.lines:
		require.True(t, ok, "output ended")
		return line
	case <-time.After(30 * time.Second): // hang guard only
		t.Fatal("no output line")
		return ""
	}
}

// TestSendAndTail: tail follows a thread of a running gateway; send posts a
// notification the dispatcher delivers into it, waking the idle thread.
func TestSendAndTail(t *testing.T) {
	m, _ := startMainAt(t, t.TempDir(), cliConfig)
	env := map[string]string{envURL: "http://" + m.Addr().String(), envAgentToken: cliAgentToken}
	thread := []string{"--agent", "coder", "--resource", "acme/api", "--thread", "acme/api#7"}

	stdout, stderr := newLineReader(), newLineReader()
	done := make(chan int, 1)
	go func() {
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		done <- run(context.Background(), append([]string{"tail", "--count", "2"}, thread...), stdout.w, stderr.w, lookup)
		stdout.w.Close()
		stderr.w.Close()
	}()
	require.Equal(t, "following coder/acme/api/acme/api#7 (Ctrl-C to stop)", stderr.next(t))

	code, out, errOut := runCLI(t, env, append([]string{"send", "--kind", "review-requested", "--priority", "high",
		"--summary", "Jane asked you to review #7"}, thread...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `^created record \S+ on coder/acme/api/acme/api#7 \(event \S+\)\ndecision: deliver — default: high priority, thread idle → deliver now \(wakes\)\n$`, out)

	require.Regexp(t, `^#1 \d\d:\d\d:\d\d run open \(run \S+, origin wake\)$`, stdout.next(t))
	require.Regexp(t, `^#2 \d\d:\d\d:\d\d signal wake \(run \S+\): <notification .*source="cli" type="review-requested" kind="review-requested" priority="high" status="delivered" verified_by="agent-token">Jane asked you to review #7</notification>$`, stdout.next(t))
	require.Equal(t, exitOK, <-done)

	code, _, errOut = runCLI(t, map[string]string{envURL: env[envURL], envAgentToken: "not-the-token-0123"}, append([]string{"tail"}, thread...)...)
	require.Equal(t, exitFail, code)
	require.Equal(t, "gateway tail: HTTP 401 unauthorized: missing or invalid credentials\n", errOut)
}

// TestTailResumesAfterADrop: when the stream ends, tail reconnects with the last
// frame's id, so nothing is printed twice or skipped.
func TestTailResumesAfterADrop(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery+"|"+r.Header.Get("Last-Event-ID"))
		n := len(seen)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprint(w, "id: 4\nevent: run\ndata: {\"id\":\"f4\",\"seq\":4,\"runId\":\"r1\",\"status\":\"open\",\"origin\":\"agent\",\"createdAt\":\"2026-11-02T09:00:00Z\"}\n\n")
			return // the connection drops
		}
		fmt.Fprint(w, ": keep-alive\n\nid: 5\nevent: signal\ndata: {\"id\":\"s5\",\"seq\":5,\"runId\":null,\"action\":\"persist\",\"type\":\"notification\",\"tagName\":\"notification-summary\",\"xml\":\"<notification-summary pending=\\\"1\\\" priority=\\\"low\\\">github: 1</notification-summary>\",\"createdAt\":\"2026-11-02T09:00:05Z\"}\n\n")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	tl := &tail{c: &client{base: srv.URL, token: "token", http: srv.Client()}, path: "/stream?after=3",
		stdout: &stdout, stderr: &stderr, count: 2, backoff: time.Millisecond}
	require.NoError(t, tl.run(context.Background(), "coder/r/t"))
	require.Equal(t, "#4 09:00:00 run open (run r1, origin agent)\n"+
		`#5 09:00:05 signal persist (no run): <notification-summary pending="1" priority="low">github: 1</notification-summary>`+"\n", stdout.String())
	require.Equal(t, "following coder/r/t (Ctrl-C to stop)\nstream ended; reconnecting in 1ms\n", stderr.String())
	require.Equal(t, []string{"after=3|", "after=3|4"}, seen)
}

// TestExplainNonJSONSample: with routes configured, a sample the connector cannot read
// says that the connector produced nothing to route, and why.
func TestExplainNonJSONSample(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, `
connectors:
  github: [ { name: acme, secret: gh-secret-0123456789 } ]
routes:
  - name: issues
    match: { source: github }
    thread: { agent: coder, resource: github, thread: issues }
`)
	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"github","connector":"acme",
		"headers":{"X-GitHub-Event":"issues"},"body":"action=opened&not=json"}`), 0o600))
	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^status:       invalid \((.+)\)\nroutes:       none tried: connector github/acme produced nothing to route: it would be stored as invalid: (.+)$`, stdout)
	require.NotContains(t, stdout, "No routes")
}
