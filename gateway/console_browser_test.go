package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// The console in a real headless Chromium. SIGNALGATE_TEST_BROWSER=1 (set by .ci/run)
// makes a missing browser a failure instead of a skip.
const (
	consoleOps    = "console-ops-token-0123456789"
	consoleViewer = "console-viewer-token-0123456789"
	consoleGitHub = "console-github-secret-0123456789"
	hookSecret    = "console-hook-secret-0123456789"
)

// chromiumPath finds Debian's chromium (or another Chromium on PATH).
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SIGNALGATE_TEST_BROWSER") == "1" {
		t.Fatal("SIGNALGATE_TEST_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the console's browser test needs Debian's chromium (SIGNALGATE_TEST_BROWSER=1 makes this a failure)")
	return ""
}

// flakyHook is a webhook agent that refuses deliveries (a permanent 400, so records
// fail at once) until it is told to accept.
type flakyHook struct {
	accept atomic.Bool
	got    chan string // webhook-id of accepted deliveries
}

func (h *flakyHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if !h.accept.Load() {
		http.Error(w, "not today", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	select {
	case h.got <- r.Header.Get("webhook-id"):
	default:
	}
}

// flakyGitHub is GitHub's issue comments API refusing comments (404) until told to
// accept them; it lists no comments (a retry looks for its marker first).
type flakyGitHub struct{ accept atomic.Bool }

func (g *flakyGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case !strings.HasSuffix(r.URL.Path, "/comments"):
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"Not Found"}`)
	case r.Method == http.MethodGet:
		_, _ = io.WriteString(w, `[]`)
	case !g.accept.Load():
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"Not Found"}`)
	default:
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":4201,"html_url":"https://github.example/acme/api/issues/1#issuecomment-4201"}`)
	}
}

type browserRun struct {
	t    *testing.T
	base string
	dir  string // screenshots
	ctx  context.Context
}

// step bounds one step, so a missing element fails the test naming what was awaited
// instead of hanging it.
func (b *browserRun) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 30*time.Second)
}

func (b *browserRun) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...), what)
}

func (b *browserRun) shot(name string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(b.t, err, "screenshot "+name)
	require.NoError(b.t, os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644))
}

// evalJS runs a script in the page (awaiting a promise) and returns its value.
func evalJS[T any](b *browserRun, js string) T {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, js)
	return v
}

// waitJS waits until a DOM condition holds.
func (b *browserRun) waitJS(what, js string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond)))
	require.NoError(b.t, err, what)
}

func (b *browserRun) text(sel string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(b.t, err, sel)
	return v
}

func (b *browserRun) signIn(token string) {
	b.t.Helper()
	b.do("sign in",
		chromedp.Navigate(b.base+"/console"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("signout")),
	)
}

func TestConsoleInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	comment := octokitExample(t, "issue_comment")
	// An attacker-controlled comment body: it must show as text everywhere.
	var payload map[string]any
	require.NoError(t, json.Unmarshal(comment, &payload))
	payload["comment"].(map[string]any)["body"] = `<script>window.__pwned=1</script><img src=x id=pwn> @octocat please look`
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the markup goes over the wire as a sender writes it
	require.NoError(t, enc.Encode(payload))
	comment = bytes.TrimSpace(buf.Bytes())
	repo := payload["repository"].(map[string]any)["full_name"].(string)
	number := fmt.Sprint(payload["issue"].(map[string]any)["number"])
	resource, thread := repo, repo+"#"+number

	hook := &flakyHook{got: make(chan string, 4)}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)
	ghAPI := &flakyGitHub{}
	ghSrv := httptest.NewServer(ghAPI)
	t.Cleanup(ghSrv.Close)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
admin:
  tokens:
    - { name: ops, token: %q, scopes: [read, write] }
    - { name: viewer, token: %q, scopes: [read] }
console: { session_ttl: 1h }
connectors:
  github: [ { name: acme, secret: %q, token: console-github-token-0123, bot_login: signalgate-bot, api_url: %q } ]
  generic: [ { name: billing, secret: %q } ]
agents:
  - { id: coder, token: dev-only-coder-token }
  - id: hooky
    token: hooky-agent-token-0123
    target: { kind: webhook, url: %q, secret: %q }
routes:
  - name: comments
    match: { source: github }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
    priority: urgent
  - name: ledger
    match: { source: generic, connector: billing, when: 'kind == "ledger-failed"' }
    thread: { agent: hooky, resource: billing, thread: ledger }
  - name: billing
    match: { source: generic, connector: billing, when: 'kind != "ledger-failed"' }
    thread: { agent: hooky, resource: billing, thread: invoices }
`, filepath.Join(dir, "gw.db"), consoleOps, consoleViewer, consoleGitHub, ghSrv.URL+"/", billingSecret, hookSrv.URL, hookSecret)), 0o600))
	cfg, err := LoadConfig(cfgPath, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	base := "http://" + m.Addr().String()

	shots := os.Getenv("SIGNALGATE_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join("testdata", "console-screenshots")
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // CI runs as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	b := &browserRun{t: t, base: base, dir: shots, ctx: ctx}
	// The first run starts the browser, which lives as long as that run's context: no
	// step timeout on it.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "start chromium")
	// Anything the page's Content-Security-Policy refuses, and any script error, fails
	// the test. Network errors are the test's own refused requests.
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for msg, err := range messages {
			if err != nil {
				return
			}
			if (msg.Type == chromedp.ConsoleError || msg.IsException()) && msg.Source != "network" {
				mu.Lock()
				problems = append(problems, msg.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancelTab(); <-done })
	noProblems := func() {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, problems, "script errors or CSP violations in the console")
	}

	// Sign in: the console's pages send a signed-out browser to the sign-in form.
	b.do("signin page", chromedp.Navigate(base+"/console/events"), chromedp.WaitVisible(chromedp.ID("token")))
	b.shot("01-signin")
	b.do("wrong token", chromedp.SendKeys(chromedp.ID("token"), "not-a-token-at-all-xx"), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("signin-error")))
	b.signIn(consoleOps)
	b.do("threads, empty", chromedp.Navigate(base+"/console/threads"), chromedp.WaitVisible(chromedp.ID("empty")))
	b.shot("02-threads-empty")

	// A thread appears (a low notification persists on an idle thread) and turns active
	// when its agent opens a run, without a reload.
	agentPath := "/v1/agents/coder/threads/" + url.PathEscape(resource) + "/" + url.PathEscape(thread)
	code := agentPost(t, base+agentPath+"/notifications", `{"source":"ci","kind":"lint","priority":"low","summary":"lint is slow today"}`)
	require.Equal(t, http.StatusCreated, code)
	row := fmt.Sprintf(`document.querySelector('tr.thread[data-thread=%q]')`, resource+" "+thread)
	b.waitJS("the thread appears", row+` !== null && `+row+`.querySelector('.presence.idle') !== null`)
	code = agentPost(t, base+agentPath+"/runs", `{}`)
	require.Equal(t, http.StatusCreated, code)
	b.waitJS("the thread turns active", row+`.querySelector('.presence.active') !== null`)
	// Times are shown in the browser's zone, in live updates too.
	b.waitJS("times are local", `document.querySelectorAll('time').length > 0 && document.querySelectorAll('time:not([data-local])').length === 0`)
	b.shot("03-threads-active")

	// A signed GitHub webhook's signal arrives live in the thread's log.
	b.do("open the thread", chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr.thread[data-thread=%q] a`, resource+" "+thread))),
		chromedp.WaitVisible(chromedp.CSS("#log-state.live")))
	b.waitJS("the run shows in the log", `document.querySelector('#log li.run') !== null`)
	postGitHub(t, base, comment, "issue_comment", "console-delivery-1")
	b.waitJS("the signal arrives live", `Array.from(document.querySelectorAll('#log li.signal pre')).some(p => p.textContent.includes('@octocat please look'))`)
	b.waitJS("the comment's record shows (the records update live)", `document.querySelectorAll('#records tr.record').length >= 2`)
	b.shot("04-thread-live")
	require.False(t, evalJS[bool](b, `window.__pwned === 1 || document.getElementById('pwn') !== null`), "the comment's markup ran or rendered")

	// The agent answers the comment; GitHub refuses it at first: the reply shows failed
	// with the reason, Retry sends it, and its link shows. Its text renders as text.
	code = agentPost(t, base+agentPath+"/replies", `{"id":"answer-1","text":"<script>window.__pwned=2</script><img src=x id=pwn2> on it"}`)
	require.Equal(t, http.StatusAccepted, code)
	b.waitJS("the record says where its answer goes", `Array.from(document.querySelectorAll('#records .reply-to')).some(e => e.textContent === `+
		strconv.Quote("reply goes to: github acme "+repo+"#"+number)+`)`)
	b.waitJS("the reply fails (the page updates live)", `document.querySelector('#replies tr.reply[data-id="answer-1"][data-status=failed] .error') !== null`)
	b.shot("04a-thread-reply-failed")
	ghAPI.accept.Store(true)
	b.do("retry the reply", chromedp.Click(chromedp.CSS("#replies button.retry")), chromedp.WaitVisible(chromedp.CSS(
		`#replies tr.reply[data-id="answer-1"][data-status=queued], #replies tr.reply[data-id="answer-1"][data-status=sent]`)))
	b.waitJS("the reply is sent", `document.querySelector('#replies tr.reply[data-id="answer-1"][data-status=sent] a.platform') !== null`)
	b.shot("04b-thread-reply-sent")
	require.True(t, strings.Contains(b.text(`#replies tr.reply[data-id="answer-1"] .summary`), "<script>window.__pwned=2</script>"), "the reply's text does not show as text")
	require.False(t, evalJS[bool](b, `window.__pwned === 2 || document.getElementById('pwn2') !== null`), "the reply's markup ran or rendered")

	// The agent watches the issue; an operator deletes the watch from the page, and the
	// thread is told once. A second watch stays for the read-only check below.
	watchBody := `{"source":"github","connector":"acme","resource":"` + repo + "#" + number + `"}`
	require.Equal(t, http.StatusCreated, agentPost(t, base+agentPath+"/watches", watchBody))
	b.waitJS("the watch shows", `document.querySelector('#watches tr.watch button.unwatch') !== null`)
	b.shot("04c-thread-watch")
	b.do("delete the watch", chromedp.Click(chromedp.CSS("#watches button.unwatch")), chromedp.WaitVisible(chromedp.ID("no-watches")))
	b.waitJS("ended by an operator", `document.querySelector('#ended-watches tr.watch[data-reason=operator]') !== null`)
	b.waitJS("the thread is told", `Array.from(document.querySelectorAll('#records tr.record')).some(r => r.textContent.includes('watch-ended'))`)
	b.shot("04d-thread-watch-ended")
	require.Equal(t, http.StatusCreated, agentPost(t, base+agentPath+"/watches", watchBody))

	// An operator snoozes the pending lint note from its row: it shows snoozed, until when.
	lint := evalJS[string](b, `Array.from(document.querySelectorAll('#records tr.record[data-status=pending]')).`+
		`find(r => r.textContent.includes('lint is slow today') && r.querySelector('button.snooze')).dataset.id`)
	require.NotEmpty(t, lint)
	b.do("snooze the lint note", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#records tr.record[data-id=%q] button.snooze`, lint))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#records tr.record[data-id=%q][data-status=snoozed] .snoozed-until`, lint))))
	require.Zero(t, evalJS[int](b, fmt.Sprintf(`document.querySelectorAll('#records tr.record[data-id=%q] button.snooze').length`, lint)),
		"a snoozed record is not offered a snooze again")
	b.shot("04e-thread-snoozed")
	silenceInBrowser(t, b, m, lint, resource, thread)

	// Open the event, see its body as text, and replay it.
	b.do("events", chromedp.Navigate(base+"/console/events?source=github"), chromedp.WaitVisible(chromedp.ID("events")),
		chromedp.Click(chromedp.CSS("#events tr.event a")), chromedp.WaitVisible(chromedp.ID("body")))
	require.True(t, strings.Contains(b.text("#body"), "<script>window.__pwned=1</script>"), "the event body does not show its markup as text")
	require.Zero(t, evalJS[int](b, `document.querySelectorAll('main script, main img').length`), "markup from the event body became elements")
	b.shot("05-event")
	b.do("replay", chromedp.Click(chromedp.ID("replay")), chromedp.WaitVisible(chromedp.ID("replayed")))
	b.shot("06-event-replayed")
	b.do("events list", chromedp.Navigate(base+"/console/events"), chromedp.WaitVisible(chromedp.ID("events")))
	b.waitJS("the replay is listed", `Array.from(document.querySelectorAll('#events tr.event')).some(r => r.textContent.includes('(replay)'))`)
	b.shot("07-events")

	// A failed record is redelivered.
	code, out := postGeneric(t, m, "console-inv-1", []byte(`{"kind":"invoice-failed","summary":"Invoice 7 failed to charge","priority":"high"}`), true)
	require.Equal(t, http.StatusOK, code, out)
	b.do("deliveries", chromedp.Navigate(base+"/console/deliveries"), chromedp.WaitVisible(chromedp.ID("targets")))
	b.waitJS("the record fails (the page updates live)", `document.querySelector('#failed tr.record') !== null`)
	b.shot("08-deliveries-failed")
	hook.accept.Store(true)
	b.do("redeliver", chromedp.Click(chromedp.CSS("#failed button.redeliver")), chromedp.WaitVisible(chromedp.ID("no-failed")))
	select {
	case <-hook.got:
	case <-time.After(30 * time.Second):
		t.Fatal("the redelivered record never reached the webhook agent")
	}
	b.shot("09-deliveries-redelivered")
	redeliverFilteredAfterRefresh(t, b, m, hook)

	// Explain a sample event.
	b.do("explain", chromedp.Navigate(base+"/console/explain"), chromedp.WaitVisible(chromedp.ID("explain-body")),
		chromedp.SetValue(chromedp.ID("explain-connector"), "github/acme"),
		chromedp.SetValue(chromedp.ID("explain-headers"), "X-GitHub-Event: issue_comment\nX-GitHub-Delivery: sample-1"),
		chromedp.SetValue(chromedp.ID("explain-body"), string(comment)),
		chromedp.Click(chromedp.ID("explain")),
		chromedp.WaitVisible(chromedp.ID("explanation")))
	explained := b.text("#explanation")
	require.Contains(t, explained, "comments")
	require.Contains(t, explained, "Decision: deliver")
	b.shot("10-explain")
	b.do("connectors", chromedp.Navigate(base+"/console/connectors"), chromedp.WaitVisible(chromedp.ID("connectors")))
	b.shot("11-connectors")

	// A phone's width: the thread page reflows without sideways scrolling of the page.
	threadPage := base + "/console/thread?" + url.Values{"agent": {"coder"}, "resource": {resource}, "thread": {thread}}.Encode()
	b.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(threadPage),
		chromedp.WaitVisible(chromedp.CSS("#log-state.live")))
	require.True(t, evalJS[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "the thread page is wider than a phone")
	b.shot("12-thread-phone")
	for i, page := range []string{"threads", "events", "deliveries", "explain", "approvals"} {
		b.do("phone "+page, chromedp.Navigate(base+"/console/"+page), chromedp.WaitVisible(chromedp.ID("signout")))
		require.True(t, evalJS[bool](b, `document.documentElement.scrollWidth <= window.innerWidth`), "the %s page is wider than a phone", page)
		b.shot(fmt.Sprintf("12%c-%s-phone", 'a'+i, page))
	}
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))

	// Sign out: the session is gone.
	b.do("sign out", chromedp.Navigate(base+"/console/threads"), chromedp.WaitVisible(chromedp.ID("signout")),
		chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.Navigate(base+"/console/threads"), chromedp.WaitVisible(chromedp.ID("token")))

	// A read-only token sees no write actions, and its POSTs are refused.
	b.signIn(consoleViewer)
	b.do("viewer thread", chromedp.Navigate(threadPage), chromedp.WaitVisible(chromedp.ID("records")))
	require.Zero(t, evalJS[int](b, `document.querySelectorAll('button.dismiss, button.snooze, button.redeliver, button.unwatch, #replay, #redeliver-all').length`))
	require.Equal(t, 1, evalJS[int](b, `document.querySelectorAll('#watches tr.watch').length`), "the viewer sees the live watch")
	b.shot("13-thread-read-only")
	silencesReadOnly(t, b, lint)
	noProblems()
	b.do("viewer events", chromedp.Navigate(base+"/console/events"), chromedp.Click(chromedp.CSS("#events tr.event a")),
		chromedp.WaitVisible(chromedp.ID("body")))
	require.Zero(t, evalJS[int](b, `document.querySelectorAll('#replay').length`))
	status := evalJS[int](b, `fetch(location.pathname + '/replay', {method: 'POST', body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value})}).then(r => r.status)`)
	require.Equal(t, http.StatusForbidden, status, "a read-only session replayed an event")
	status = evalJS[int](b, `fetch(location.pathname + '/replay', {method: 'POST'}).then(r => r.status)`)
	require.Equal(t, http.StatusForbidden, status, "a form without the CSRF token was accepted")

	// Sign out everywhere: this browser's session ends with the token's others.
	b.do("sign out everywhere", chromedp.Navigate(base+"/console/threads"), chromedp.Click(chromedp.ID("signout-everywhere")),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.Navigate(base+"/console/threads"), chromedp.WaitVisible(chromedp.ID("token")))
}

// redeliverFilteredAfterRefresh: on the deliveries page filtered to one thread, "Redeliver
// all failed shown" still works once the live region has refreshed (the region must hold
// the whole form), and redelivers that thread's failed records only.
func redeliverFilteredAfterRefresh(t *testing.T, b *browserRun, m *Gateway, hook *flakyHook) {
	t.Helper()
	hook.accept.Store(false)
	for id, body := range map[string]string{
		"console-inv-2":    `{"kind":"invoice-failed","summary":"Invoice 8 failed to charge","priority":"high"}`,
		"console-inv-3":    `{"kind":"invoice-failed","summary":"Invoice 9 failed to charge","priority":"high"}`,
		"console-ledger-1": `{"kind":"ledger-failed","summary":"Ledger out of balance","priority":"high"}`,
	} {
		code, out := postGeneric(t, m, id, []byte(body), true)
		require.Equal(t, http.StatusOK, code, out)
	}
	b.do("deliveries, all", chromedp.Navigate(b.base+"/console/deliveries"), chromedp.WaitVisible(chromedp.ID("targets")))
	b.waitJS("three records fail", `document.querySelectorAll('#failed tr.record').length === 3`)
	filtered := b.base + "/console/deliveries?" + url.Values{"agent": {"hooky"}, "resource": {"billing"}, "thread": {"invoices"}}.Encode()
	b.do("deliveries, one thread", chromedp.Navigate(filtered), chromedp.WaitVisible(chromedp.ID("redeliver-all")))
	ids := evalJS[[]string](b, `Array.from(document.querySelectorAll('#failed tr.record')).map(r => r.dataset.id)`)
	require.Len(t, ids, 2, "the filtered page shows the thread's two failed records")

	// The region is replaced by its refresh: an element marked now is gone once it has.
	evalJS[bool](b, `document.getElementById('live').setAttribute('data-before-refresh', '1') === undefined`)
	b.waitJS("the live region refreshes", `(() => { const l = document.getElementById('live');
		return l !== null && !l.hasAttribute('data-before-refresh') && !l.classList.contains('htmx-settling') })()`)
	b.shot("09a-deliveries-filtered-refreshed")
	require.True(t, evalJS[bool](b, `(() => { const btn = document.querySelector('#live #redeliver-all');
		return btn !== null && btn.form !== null && btn.form.querySelector('input[name=thread]').value === 'invoices' &&
			document.querySelectorAll('#live #failed tr.record').length === 2 })()`),
		"after a refresh the live region lacks the redeliver-all form or the failed records")

	hook.accept.Store(true)
	b.do("redeliver all shown", chromedp.Click(chromedp.ID("redeliver-all")), chromedp.WaitVisible(chromedp.ID("no-failed")))
	threadPage := b.base + "/console/thread?" + url.Values{"agent": {"hooky"}, "resource": {"billing"}, "thread": {"invoices"}}.Encode()
	b.do("the thread", chromedp.Navigate(threadPage), chromedp.WaitVisible(chromedp.ID("records")))
	idList, err := json.Marshal(ids)
	require.NoError(t, err)
	b.waitJS("both records are delivered", string(idList)+`.every(id => document.querySelector('#records tr.record[data-id="' + id + '"][data-status=delivered]') !== null)`)

	// The admin API agrees: the thread's records delivered, the other thread's still failed.
	for _, id := range ids {
		var rec inbox.Record
		require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/notifications/"+id, consoleOps, nil, &rec))
		require.Equal(t, inbox.StatusDelivered, rec.Status, id)
	}
	var failed admin.RecordPage
	require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/notifications?agent=hooky&status=failed", consoleOps, nil, &failed))
	require.Len(t, failed.Notifications, 1, "redeliver all shown touched records it did not show")
	require.Equal(t, "ledger", failed.Notifications[0].Thread.Thread)
}

func agentPost(t *testing.T, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer dev-only-coder-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func postGitHub(t *testing.T, base string, body []byte, event, delivery string) {
	t.Helper()
	code, out := sendGitHubSigned(t, base, consoleGitHub, body, event, delivery)
	require.Equal(t, http.StatusOK, code, out)
}
