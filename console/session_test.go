package console

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const recordID = "01a20cce-e67a-7ed7-9c39-4c4cce4cac3e"

// forEachSessionStore runs fn with two console replicas sharing one session store, on
// SQLite and (when configured) PostgreSQL.
func forEachSessionStore(t *testing.T, fn func(t *testing.T, a, b *fixture)) {
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			st := storetest.Open(t, be)
			sessions := store.NewConsoleSessions(st)
			fn(t, newFixtureOn(t, testTokens, sessions), newFixtureOn(t, testTokens, sessions))
		})
	}
}

// The attacker copied the cookie and a CSRF token before the operator signed out: the
// copy then neither reads a page nor dismisses a record, on any replica.
func TestSignedOutCookieCopyIsNoSession(t *testing.T) {
	forEachSessionStore(t, func(t *testing.T, a, b *fixture) {
		ck := a.signIn(opsToken)
		token := a.csrf(ck)
		stolen := *ck
		require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/console/threads", nil, &stolen, nil).status, "a replica shares the session")

		r := a.do(http.MethodPost, "/console/signout", url.Values{"csrf": {token}}, ck, nil)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)

		for _, f := range []*fixture{a, b} {
			r := f.do(http.MethodGet, "/console/threads", nil, &stolen, nil)
			require.Equal(t, http.StatusSeeOther, r.status)
			require.Contains(t, r.header.Get("Location"), "/console/signin")
			r = f.do(http.MethodPost, "/console/notifications/"+recordID+"/dismiss", url.Values{"csrf": {token}}, &stolen, nil)
			require.Equal(t, http.StatusUnauthorized, r.status)
			r = f.do(http.MethodPost, "/console/notifications/"+recordID+"/dismiss", nil, &stolen, map[string]string{"X-CSRF-Token": token})
			require.Equal(t, http.StatusUnauthorized, r.status)
			require.Empty(t, f.admin.done())
		}
	})
}

// Sign out everywhere ends every session of the token, in other browsers too, and
// leaves other tokens' sessions alone.
func TestSignOutEverywhere(t *testing.T) {
	forEachSessionStore(t, func(t *testing.T, a, b *fixture) {
		mine, other, viewer := a.signIn(opsToken), b.signIn(opsToken), a.signIn(viewerToken)
		otherCSRF := b.csrf(other)
		page := a.do(http.MethodGet, "/console/threads", nil, mine, nil)
		require.Contains(t, page.body, `id="signout-everywhere"`)

		r := a.do(http.MethodPost, "/console/signout/everywhere", url.Values{"csrf": {a.csrf(mine)}}, mine, nil)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		cookies := (&http.Response{Header: r.header}).Cookies()
		require.Len(t, cookies, 1)
		require.Empty(t, cookies[0].Value)

		for name, ck := range map[string]*http.Cookie{"this browser": mine, "another browser": other} {
			require.Equal(t, http.StatusSeeOther, b.do(http.MethodGet, "/console/threads", nil, ck, nil).status, name)
		}
		r = b.do(http.MethodPost, "/console/notifications/"+recordID+"/dismiss", url.Values{"csrf": {otherCSRF}}, other, nil)
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Empty(t, b.admin.done())
		require.Equal(t, http.StatusOK, a.do(http.MethodGet, "/console/threads", nil, viewer, nil).status, "another token's session")

		// Without the CSRF token nobody's sessions end.
		r = a.do(http.MethodPost, "/console/signout/everywhere", nil, viewer, nil)
		require.Equal(t, http.StatusForbidden, r.status)
		require.Equal(t, http.StatusOK, a.do(http.MethodGet, "/console/threads", nil, viewer, nil).status)
	})
}

// stream opens the thread's live stream and returns its reader once the first line came.
func (f *fixture) stream(ck *http.Cookie) *bufio.Reader {
	f.t.Helper()
	// A bound that only turns a stream that never ends into a failure instead of a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	f.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/console/thread/stream?agent=coder&resource=r&thread=t", nil)
	require.NoError(f.t, err)
	req.AddCookie(ck)
	res, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { res.Body.Close() })
	require.Equal(f.t, http.StatusOK, res.StatusCode)
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n')
	require.NoError(f.t, err)
	require.Contains(f.t, line, "stream of")
	return br
}

// check has the open stream check its session once and returns whether it found it live.
func (f *fixture) check() bool {
	f.t.Helper()
	// The bound only turns a stream that never checks into a failure instead of a hang.
	select {
	case f.ticks <- f.clock():
	case <-time.After(time.Minute):
		f.t.Fatal("no live stream is checking its session")
	}
	return <-f.checks
}

// ended reads the stream to its end: it must end cleanly, not by the test's bound.
func ended(t *testing.T, br *bufio.Reader) {
	t.Helper()
	rest, err := io.ReadAll(br)
	require.NoError(t, err, "the stream did not end")
	require.Empty(t, rest)
}

// A live stream ends when its session is signed out (on another replica) or expires.
func TestStreamEndsWithItsSession(t *testing.T) {
	forEachSessionStore(t, func(t *testing.T, a, b *fixture) {
		ck := a.signIn(opsToken)
		br := a.stream(ck)
		require.True(t, a.check())

		r := b.do(http.MethodPost, "/console/signout", url.Values{"csrf": {b.csrf(ck)}}, ck, nil)
		require.Equal(t, http.StatusSeeOther, r.status)
		require.False(t, a.check())
		ended(t, br)

		ck = a.signIn(opsToken)
		br = a.stream(ck)
		a.advance(59 * time.Minute)
		require.True(t, a.check())
		a.advance(time.Minute) // session_ttl is an hour
		require.False(t, a.check())
		ended(t, br)
	})
}

// Tokens never come from the URL (it ends up in logs and history): a sign-in token or a
// CSRF token in the query string is refused, even alongside a good one in the body.
func TestTokensInTheURLAreRefused(t *testing.T) {
	f := newFixture(t, testTokens)
	for name, form := range map[string]url.Values{"in the URL only": {"next": {"/console/events"}}, "in both": {"token": {opsToken}}} {
		r := f.do(http.MethodPost, "/console/signin?token="+url.QueryEscape(opsToken), form, nil, nil)
		require.Equal(t, http.StatusBadRequest, r.status, name)
		require.Contains(t, r.body, "never in the URL", name)
		require.Empty(t, r.header.Values("Set-Cookie"), name)
	}

	ck := f.signIn(opsToken)
	token := f.csrf(ck)
	for name, form := range map[string]url.Values{"in the URL only": {}, "in both": {"csrf": {token}}} {
		r := f.do(http.MethodPost, "/console/notifications/"+recordID+"/dismiss?csrf="+url.QueryEscape(token), form, ck, nil)
		require.Equal(t, http.StatusBadRequest, r.status, name)
		require.Contains(t, r.body, "never in the URL", name)
	}
	r := f.do(http.MethodPost, "/console/signout?csrf="+url.QueryEscape(token), url.Values{}, ck, nil)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Empty(t, f.admin.done())
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/console/threads", nil, ck, nil).status, "still signed in")
}

// brokenSessions is a session store that cannot be reached.
type brokenSessions struct{}

func (brokenSessions) CreateConsoleSession(context.Context, string, string, time.Time, time.Time) error {
	return errors.New("database is down")
}
func (brokenSessions) ConsoleSessionLive(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("database is down")
}
func (brokenSessions) DeleteConsoleSession(context.Context, string) error {
	return errors.New("database is down")
}
func (brokenSessions) DeleteConsoleSessionsOf(context.Context, string) (int64, error) {
	return 0, errors.New("database is down")
}

// Without its session store the console signs nobody in and lets no cookie through.
func TestSessionStoreDown(t *testing.T) {
	f := newFixtureOn(t, testTokens, brokenSessions{})
	r := f.do(http.MethodPost, "/console/signin", url.Values{"token": {opsToken}}, nil, nil)
	require.Equal(t, http.StatusInternalServerError, r.status)
	require.Empty(t, r.header.Values("Set-Cookie"))
	require.NotContains(t, r.body, "database is down")

	ck := newFixture(t, testTokens).signIn(opsToken) // a cookie this console's key signs
	r = f.do(http.MethodGet, "/console/threads", nil, ck, nil)
	require.Equal(t, http.StatusInternalServerError, r.status)
	require.NotContains(t, r.body, "csrf")
}
