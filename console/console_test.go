package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	opsToken    = "ops-token-0123456789abcdef"
	viewerToken = "viewer-token-0123456789abcdef"
	testKey     = "console-session-key-0123456789abcdef"
)

var testTokens = []admin.Token{
	{Name: "ops", Token: opsToken, Scopes: []string{admin.ScopeRead, admin.ScopeWrite}},
	{Name: "viewer", Token: viewerToken, Scopes: []string{admin.ScopeRead}},
}

// fakeAdmin answers the console's queries from fixed data and records the actions.
type fakeAdmin struct {
	mu         sync.Mutex
	events     []inbox.Event
	event      admin.EventDetail
	approvals  []approval.Approval
	actions    []string
	explained  *admin.Explanation // Explain's answer; nil: a 400
	records    []inbox.Record
	threads    []agent.Thread // Threads' answer
	replies    []admin.AdminReply
	repliesQ   []url.Values // what Replies was asked
	watches    []admin.AdminWatch
	watchesQ   []url.Values              // what Watches was asked
	endErr     error                     // EndWatch's answer
	detail     *admin.NotificationDetail // Notification's answer for its id; other ids are not found
	silences   []silence.Silence
	silencesQ  []url.Values    // what Silences was asked
	created    []silence.Input // what CreateSilence was given
	silenceErr error           // CreateSilence's and ExpireSilence's answer
	connectors []admin.ConnectorHealth
}

func (f *fakeAdmin) did(a string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, a)
}

func (f *fakeAdmin) done() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.actions...)
}

func (f *fakeAdmin) Authenticate(raw string) (admin.Token, bool) {
	for _, t := range testTokens {
		if t.Token.Reveal() == raw {
			return t, true
		}
	}
	return admin.Token{}, false
}
func (f *fakeAdmin) Threads(context.Context, url.Values) (admin.ThreadPage, error) {
	return admin.ThreadPage{Threads: f.threads}, nil
}
func (f *fakeAdmin) Notifications(context.Context, url.Values) (admin.RecordPage, error) {
	return admin.RecordPage{Notifications: f.records}, nil
}
func (f *fakeAdmin) Replies(_ context.Context, q url.Values) (admin.ReplyPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repliesQ = append(f.repliesQ, q)
	return admin.ReplyPage{Replies: f.replies}, nil
}
func (f *fakeAdmin) RetryReply(_ context.Context, id string) (admin.AdminReply, error) {
	f.did("retry reply " + id)
	return admin.AdminReply{}, nil
}
func (f *fakeAdmin) Watches(_ context.Context, q url.Values) (admin.WatchPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchesQ = append(f.watchesQ, q)
	out := []admin.AdminWatch{}
	for _, w := range f.watches {
		if (w.EndedAt != nil) == (q.Get("status") == "ended") {
			out = append(out, w)
		}
	}
	return admin.WatchPage{Watches: out}, nil
}
func (f *fakeAdmin) EndWatch(_ context.Context, id, by string) (admin.AdminWatch, error) {
	if f.endErr != nil {
		return admin.AdminWatch{}, f.endErr
	}
	f.did("end watch " + id + " by " + by)
	return admin.AdminWatch{}, nil
}
func (f *fakeAdmin) Notification(_ context.Context, id string) (admin.NotificationDetail, error) {
	if f.detail != nil && f.detail.ID == id {
		return *f.detail, nil
	}
	return admin.NotificationDetail{}, server.NotFound("notification %q not found", id)
}
func (f *fakeAdmin) Silences(_ context.Context, q url.Values) (admin.SilencePage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.silencesQ = append(f.silencesQ, q)
	out := []silence.Silence{}
	for _, s := range f.silences {
		if st := q.Get("state"); st == "" || string(s.Status.State) == st {
			out = append(out, s)
		}
	}
	return admin.SilencePage{Silences: out}, nil
}
func (f *fakeAdmin) CreateSilence(_ context.Context, in silence.Input) (silence.Silence, error) {
	if f.silenceErr != nil {
		return silence.Silence{}, f.silenceErr
	}
	f.mu.Lock()
	f.created = append(f.created, in)
	f.mu.Unlock()
	f.did("create silence by " + in.CreatedBy)
	return silence.Silence{ID: "s-new", Input: in, Status: silence.Status{State: silence.StateActive}}, nil
}
func (f *fakeAdmin) ExpireSilence(_ context.Context, id, by string) (silence.Silence, error) {
	if f.silenceErr != nil {
		return silence.Silence{}, f.silenceErr
	}
	f.did("expire silence " + id + " by " + by)
	return silence.Silence{ID: id, Status: silence.Status{State: silence.StateExpired}, ExpiredBy: by}, nil
}
func (f *fakeAdmin) Dismiss(_ context.Context, id, by string) (inbox.Record, error) {
	f.did("dismiss " + id + " by " + by)
	return inbox.Record{}, nil
}
func (f *fakeAdmin) Snooze(_ context.Context, id string, until time.Time, by string) (inbox.Record, error) {
	f.did("snooze " + id + " until " + until.UTC().Format(time.RFC3339) + " by " + by)
	return inbox.Record{}, nil
}
func (f *fakeAdmin) Redeliver(_ context.Context, id, by string) (inbox.Record, error) {
	f.did("redeliver " + id + " by " + by)
	return inbox.Record{}, nil
}
func (f *fakeAdmin) RedeliverFailed(_ context.Context, q url.Values, by string) (admin.RedeliverResult, error) {
	f.did("redeliver-all " + q.Encode() + " by " + by)
	return admin.RedeliverResult{}, nil
}
func (f *fakeAdmin) Events(_ context.Context, q url.Values) (admin.EventPage, error) {
	if q.Get("status") == "bogus" {
		return admin.EventPage{}, server.BadRequest("status: unknown %q", "bogus")
	}
	return admin.EventPage{Events: f.events}, nil
}
func (f *fakeAdmin) Event(context.Context, string) (admin.EventDetail, error) { return f.event, nil }
func (f *fakeAdmin) Approvals(_ context.Context, q url.Values) (admin.ApprovalPage, error) {
	if q.Get("status") == "bogus" {
		return admin.ApprovalPage{}, server.BadRequest("status: unknown %q", "bogus")
	}
	return admin.ApprovalPage{Approvals: f.approvals}, nil
}
func (f *fakeAdmin) ReplayEvent(_ context.Context, id, by string) (admin.ReplayResult, error) {
	f.did("replay " + id + " by " + by)
	return admin.ReplayResult{EventID: "new-id"}, nil
}
func (f *fakeAdmin) Deliveries(context.Context, url.Values) (admin.DeliveryPage, error) {
	return admin.DeliveryPage{}, nil
}
func (f *fakeAdmin) Connectors(context.Context) ([]admin.ConnectorHealth, error) {
	return f.connectors, nil
}
func (f *fakeAdmin) Targets(context.Context) ([]admin.TargetStatus, error) { return nil, nil }
func (f *fakeAdmin) Explain(context.Context, admin.Sample) (*admin.Explanation, error) {
	if f.explained != nil {
		return f.explained, nil
	}
	return nil, server.BadRequest("source: required")
}

// fakeStream writes one line and holds the stream open until its request's context ends,
// as the agent API's stream does.
type fakeStream struct{}

func (fakeStream) ServeStream(c echo.Context, k inbox.ThreadKey) error {
	c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
	c.Response().WriteHeader(http.StatusOK)
	if _, err := io.WriteString(c.Response(), "stream of "+k.String()+"\n"); err != nil {
		return nil
	}
	c.Response().Flush()
	<-c.Request().Context().Done()
	return nil
}

type fixture struct {
	t     *testing.T
	srv   *httptest.Server
	admin *fakeAdmin
	// ticks drives live streams' session checks and checks hears their outcomes.
	ticks  chan time.Time
	checks chan bool
	now    time.Time
	mu     sync.Mutex
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// newFixture serves a console whose sessions are kept in a fresh SQLite store.
func newFixture(t *testing.T, tokens []admin.Token) *fixture {
	return newFixtureOn(t, tokens, store.NewConsoleSessions(storetest.OpenSQLite(t)))
}

// newFixtureOn serves a console over sessions (consoles given one store are replicas).
func newFixtureOn(t *testing.T, tokens []admin.Token, sessions Sessions, more ...func(*Deps)) *fixture {
	f := &fixture{t: t, admin: &fakeAdmin{}, ticks: make(chan time.Time), checks: make(chan bool), now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	d := Deps{Admin: f.admin, Stream: fakeStream{}, Sessions: sessions, Tokens: tokens, Now: f.clock,
		Sources: kindstest.Sources(), Places: kindstest.Places()}
	for _, m := range more {
		m(&d)
	}
	c, err := New(Config{SessionKey: testKey, SessionTTL: time.Hour}, d)
	require.NoError(t, err)
	c.streamTicks = func() (<-chan time.Time, func()) { return f.ticks, func() {} }
	c.streamChecked = func(live bool) { f.checks <- live }
	e := echo.New()
	c.Mount(e)
	f.srv = httptest.NewServer(e)
	t.Cleanup(f.srv.Close)
	return f
}

type resp struct {
	status int
	body   string
	header http.Header
}

// do sends a request as the browser would from a console page (same origin).
func (f *fixture) do(method, path string, form url.Values, cookie *http.Cookie, header map[string]string) resp {
	f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	require.NoError(f.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := client.Do(req)
	require.NoError(f.t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	require.NoError(f.t, err)
	return resp{status: r.StatusCode, body: string(b), header: r.Header}
}

// signIn returns the session cookie.
func (f *fixture) signIn(token string) *http.Cookie {
	f.t.Helper()
	r := f.do(http.MethodPost, "/console/signin", url.Values{"token": {token}, "next": {"/console/events"}}, nil, nil)
	require.Equal(f.t, http.StatusSeeOther, r.status, r.body)
	require.Equal(f.t, "/console/events", r.header.Get("Location"))
	cookies := (&http.Response{Header: r.header}).Cookies()
	require.Len(f.t, cookies, 1)
	return cookies[0]
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (f *fixture) csrf(ck *http.Cookie) string {
	f.t.Helper()
	r := f.do(http.MethodGet, "/console/threads", nil, ck, nil)
	require.Equal(f.t, http.StatusOK, r.status)
	m := csrfField.FindStringSubmatch(r.body)
	require.NotNil(f.t, m, "no CSRF field on the page")
	return m[1]
}

func TestSessionCookie(t *testing.T) {
	f := newFixture(t, testTokens)
	r := f.do(http.MethodGet, "/console/threads", nil, nil, nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/console/signin?next=%2Fconsole%2Fthreads", r.header.Get("Location"))

	r = f.do(http.MethodPost, "/console/signin", url.Values{"token": {"wrong-token-0123456789"}}, nil, nil)
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, r.body, "not a configured admin token")
	require.Empty(t, r.header.Values("Set-Cookie"))

	ck := f.signIn(opsToken)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/console", ck.Path)
	require.NotContains(t, ck.Value, opsToken)
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status)

	// A tampered cookie is no session.
	bad := *ck
	bad.Value = ck.Value[:len(ck.Value)-4] + "AAAA"
	require.Equal(t, http.StatusSeeOther, f.do(http.MethodGet, "/console/threads", nil, &bad, nil).status)

	// The session ends at its expiry (session_ttl), by the injected clock.
	f.advance(59 * time.Minute)
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status)
	f.advance(time.Minute)
	require.Equal(t, http.StatusSeeOther, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status)
}

// A token taken out of the config (or given another value or fewer scopes) ends its
// sessions even under the same session key.
func TestSessionEndsWithItsToken(t *testing.T) {
	sessions := store.NewConsoleSessions(storetest.OpenSQLite(t))
	ck := newFixtureOn(t, testTokens, sessions).signIn(opsToken)
	for name, tokens := range map[string][]admin.Token{
		"removed":     {testTokens[1]},
		"new value":   {{Name: "ops", Token: "another-ops-token-0123456789", Scopes: testTokens[0].Scopes}, testTokens[1]},
		"fewer scope": {{Name: "ops", Token: opsToken, Scopes: []string{admin.ScopeRead}}, testTokens[1]},
	} {
		f := newFixtureOn(t, tokens, sessions)
		require.Equal(t, http.StatusSeeOther, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status, name)
	}
	f := newFixtureOn(t, testTokens, sessions)
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status, "same config")
}

func TestWriteActionsNeedCSRFAndWriteScope(t *testing.T) {
	f := newFixture(t, testTokens)
	ops := f.signIn(opsToken)
	token := f.csrf(ops)
	const id = "01a20cce-e67a-7ed7-9c39-4c4cce4cac3e"

	for name, form := range map[string]url.Values{"no token": {}, "wrong token": {"csrf": {"x" + token}}} {
		r := f.do(http.MethodPost, "/console/notifications/"+id+"/dismiss", form, ops, nil)
		require.Equal(t, http.StatusForbidden, r.status, name)
	}
	// A cross-site form post is refused whatever it carries.
	r := f.do(http.MethodPost, "/console/notifications/"+id+"/dismiss", url.Values{"csrf": {token}}, ops,
		map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Empty(t, f.admin.done())

	r = f.do(http.MethodPost, "/console/notifications/"+id+"/dismiss",
		url.Values{"csrf": {token}, "back": {"https://evil.example/x"}}, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/console/threads", r.header.Get("Location"), "a form's back link stays in the console")
	require.Equal(t, []string{"dismiss " + id + " by ops"}, f.admin.done())

	// A read-only session renders no write buttons and its posts are refused.
	viewer := f.signIn(viewerToken)
	vtoken := f.csrf(viewer)
	f.admin.event = admin.EventDetail{Event: inbox.Event{ID: id, Source: "github", Status: inbox.EventRouted}}
	page := f.do(http.MethodGet, "/console/events/"+id, nil, viewer, nil)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, page.body, `id="replay"`)
	require.Contains(t, f.do(http.MethodGet, "/console/events/"+id, nil, ops, nil).body, `id="replay"`)
	for _, path := range []string{"/console/events/" + id + "/replay", "/console/notifications/" + id + "/redeliver", "/console/notifications/redeliver"} {
		r := f.do(http.MethodPost, path, url.Values{"csrf": {vtoken}}, viewer, nil)
		require.Equal(t, http.StatusForbidden, r.status, path)
		require.Contains(t, r.body, "read-only")
	}
	require.Len(t, f.admin.done(), 1)

	// Signing out clears the cookie.
	r = f.do(http.MethodPost, "/console/signout", url.Values{"csrf": {token}}, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	cookies := (&http.Response{Header: r.header}).Cookies()
	require.Len(t, cookies, 1)
	require.Empty(t, cookies[0].Value)
	require.Less(t, cookies[0].MaxAge, 0)
}

// Everything an event carries is attacker-controlled: it renders as text.
func TestPagesEscapeWhatTheyShow(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(opsToken)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	f.admin.events = []inbox.Event{{ID: "e1", Source: "generic", Connector: "billing", Type: evil, Status: inbox.EventInvalid, Error: evil, DeliveryID: evil}}
	body := `{"summary":"` + evil + `"}`
	f.admin.event = admin.EventDetail{Event: inbox.Event{ID: "e1", Source: "generic", Type: evil, Headers: map[string]string{"X-Evil": evil}}, Body: &body}
	for _, path := range []string{"/console/events", "/console/events/e1"} {
		r := f.do(http.MethodGet, path, nil, ck, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, r.body, "<script>alert", path)
		require.NotContains(t, r.body, "<img src=x", path)
		require.Contains(t, r.body, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
		require.Equal(t, csp, r.header.Get("Content-Security-Policy"))
		require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	}
	// The admin API's 400 shows as a page naming the parameter.
	r := f.do(http.MethodGet, "/console/events?status=bogus", nil, ck, nil)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, r.body, "status: unknown")
}

// The connectors page shows each connector's last backfill pass: when, its lag, what
// it found, a rate limit and its error.
func TestConnectorsPageShowsBackfill(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(viewerToken)
	until := time.Date(2026, 3, 1, 12, 20, 0, 0, time.UTC)
	f.admin.connectors = []admin.ConnectorHealth{
		{ConnectorRef: admin.ConnectorRef{Source: "github", Name: "main"}, Backfill: &connectors.BackfillPass{
			At: time.Date(2026, 3, 1, 12, 17, 0, 0, time.UTC), LagSeconds: 937.5, Ingested: 40, Duplicate: 1, Requests: 41,
			RateLimitedUntil: &until, Error: "<b>boom</b>"}},
		{ConnectorRef: admin.ConnectorRef{Source: "generic", Name: "billing"}},
	}
	r := f.do(http.MethodGet, "/console/connectors", nil, ck, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "lag 938s · 40 ingested, 1 duplicate, 0 ignored · 41 requests")
	require.Contains(t, r.body, "rate limited until")
	require.Contains(t, r.body, "&lt;b&gt;boom&lt;/b&gt;")
	require.Contains(t, r.body, `<span class="muted">off</span>`, "a connector without backfill says so")
}

// The event page says an event came by backfill, and with which provenance.
func TestEventPageSaysItCameByBackfill(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(viewerToken)
	f.admin.event = admin.EventDetail{Event: inbox.Event{ID: "e1", Source: "github", Connector: "main", Type: "issue_comment",
		Headers: map[string]string{connectors.BackfillHeader: "github-api"}}}
	r := f.do(http.MethodGet, "/console/events/e1", nil, ck, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `came by backfill, read from the provider's API (verified_by <code>github-api</code>)`)
	f.admin.event.Headers = nil
	r = f.do(http.MethodGet, "/console/events/e1", nil, ck, nil)
	require.NotContains(t, r.body, "came by backfill")
}

// The events page's source filter offers the integration kinds' sources (the kinds
// table's, in its order) and the agent API's.
func TestEventsFilterOffersTheKindsSources(t *testing.T) {
	f := newFixtureOn(t, testTokens, store.NewConsoleSessions(storetest.OpenSQLite(t)), func(d *Deps) { d.Sources = []string{"github", "fake"} })
	body := f.do(http.MethodGet, "/console/events?source=fake", nil, f.signIn(opsToken), nil).body
	require.Contains(t, body, `<option value="">any</option><option>github</option><option selected>fake</option><option>agent-api</option></select>`)
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/console/events?source=github": "/console/events?source=github",
		"":                              "/console/threads",
		"https://evil.example/":         "/console/threads",
		"//evil.example/console/":       "/console/threads",
		"/console/\\evil":               "/console/threads",
		"/consoleevil":                  "/console/threads",
		"/console/signin":               "/console/threads",
	} {
		require.Equal(t, want, localPath(in), in)
	}
}

// The vendored script is the one VENDOR.md names.
func TestVendoredHTMX(t *testing.T) {
	raw, err := os.ReadFile("static/htmx.min.js")
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	vendor, err := os.ReadFile("static/VENDOR.md")
	require.NoError(t, err)
	require.Contains(t, string(vendor), "| htmx.min.js |")
	require.Contains(t, string(vendor), hex.EncodeToString(sum[:]))
	require.Contains(t, string(raw), "2.0.11")
}

func TestConfig(t *testing.T) {
	require.ErrorContains(t, Config{SessionKey: "short"}.Validate(), "session_key: must be at least 32 characters")
	require.ErrorContains(t, Config{SessionTTL: -time.Second}.Validate(), "session_ttl")
	require.Equal(t, DefaultSessionTTL, Config{}.WithDefaults().SessionTTL)
	require.NoError(t, Config{SessionKey: testKey}.Validate())
}

// Paging and filters are links: a cursor keeps the filters, a new filter starts over.
func TestLinks(t *testing.T) {
	q := url.Values{"source": {"github"}, "cursor": {"abc"}}
	require.Equal(t, "/console/events?cursor=next&source=github", withParam("/console/events", q, "cursor", "next"))
	require.Equal(t, "/console/events?source=slack", withParam("/console/events", q, "source", "slack"))
	require.Equal(t, "/console/events", withParam("/console/events", url.Values{"source": {"github"}}, "source", ""))
	require.Equal(t, url.Values{"source": {"github"}}, cleanQuery(url.Values{"source": {"github"}, "status": {""}, "since": {""}}))
	require.Equal(t, "/console/thread?agent=coder&resource=acme%2Fapi&thread=acme%2Fapi%237",
		threadURL(inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}))
}

// Without admin tokens nobody can sign in, and the sign-in page says what to do.
func TestSigninWithoutTokens(t *testing.T) {
	f := newFixture(t, nil)
	r := f.do(http.MethodGet, "/console/signin", nil, nil, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "No admin tokens are configured")
	require.NotContains(t, newFixture(t, testTokens).do(http.MethodGet, "/console/signin", nil, nil, nil).body, "No admin tokens")
}

// A record's page shows each signal that carried it, with how it was handed to the agent
// (the page is a template: a field it names that the frame lacks only fails when drawn).
func TestRecordPageShowsItsSignals(t *testing.T) {
	f := newFixture(t, testTokens)
	f.admin.detail = recordDetail()
	f.admin.detail.Signals = []agent.Frame{{Event: agent.EventSignal, ID: "sig-1", Seq: 7, Behavior: agent.BehaviorWake,
		XML: `<notification kind="ci-failure">CI failed on main</notification>`, CreatedAt: f.now}}
	r := f.do(http.MethodGet, "/console/notifications/r1", nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "<b>#7</b> wake")
	require.Contains(t, r.body, "&lt;notification kind=&#34;ci-failure&#34;&gt;CI failed on main&lt;/notification&gt;")
}

// Without JavaScript the thread page does not call a log with entries empty: a
// <noscript> says the log has entries and how to follow it in a terminal; the empty
// note is only for a thread whose log is empty, and shown by the script.
func TestThreadPageWithoutJavaScript(t *testing.T) {
	f := newFixture(t, testTokens)
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	path := "/console/thread?agent=coder&resource=acme%2Fapi&thread=acme%2Fapi%237"
	f.admin.threads = []agent.Thread{{ThreadKey: k, LastSeq: 12}}
	r := f.do(http.MethodGet, path, nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.NotContains(t, r.body, "Nothing in this thread's log yet")
	require.Contains(t, r.body, "This thread's log has entries (the last is #12), followed live on this page with JavaScript, which is off.")
	require.Contains(t, r.body, "gateway tail --agent coder --resource 'acme/api' --thread 'acme/api#7'")
	require.Contains(t, r.body, `<small id="log-state" class="muted" hidden>`, "no \"connecting…\" that never connects")

	f.admin.threads = nil
	r = f.do(http.MethodGet, path, nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, "<noscript><p class=\"empty\" id=\"log-noscript\">Nothing in this thread's log yet.")
	require.Contains(t, r.body, `<p class="empty" id="log-empty" hidden>Nothing in this thread's log yet`)
}
