package console

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sign-in's next (and a form's back) is read by the browser after the console let it
// through: every spelling of a way out (dot segments, encoded or not, protocol-relative
// and absolute URLs, backslashes, control characters) lands under /console/.
func TestSigninNextStaysInConsole(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(opsToken)
	for _, tc := range []struct{ next, want string }{
		{"/console/events?source=github", "/console/events?source=github"},
		{"/console/./events", "/console/events"},
		{"/console/events/../approvals", "/console/approvals"},
		{"/console/events#top", "/console/events"},
		{"/console/events?back=/../../evil", "/console/events?back=/../../evil"},
		{"/console/../../evil", "/console/threads"},
		{"/console/..", "/console/threads"},
		{"/console/%2e%2e/evil", "/console/threads"},
		{"/console/%2E%2E/%2e%2e/evil", "/console/threads"},
		{"/console/.%2e/evil", "/console/threads"},
		{"/console/..%2f..%2fevil", "/console/threads"},
		{"/console/%2e%2e%2f%2fevil.example", "/console/threads"},
		{"/console/x/../../signin", "/console/threads"},
		{"/console/events/../static/console.js", "/console/threads"},
		{"//evil.example", "/console/threads"},
		{"//evil.example/console/", "/console/threads"},
		{"///evil.example/console/", "/console/threads"},
		{"\\\\evil", "/console/threads"},
		{"/\\evil.example", "/console/threads"},
		{"/console/..\\..\\evil", "/console/threads"},
		{"/console/%5c%5cevil", "/console/threads"},
		{"/\t/evil.example", "/console/threads"},
		{"/console/\n/evil", "/console/threads"},
		{"/console/%00", "/console/threads"},
		{" /console/threads", "/console/threads"},
		{"https://evil.example/console/", "/console/threads"},
		{"http:/console/events", "/console/threads"},
		{"javascript:alert(1)//console/", "/console/threads"},
		{"evil.example/console/", "/console/threads"},
		{"/console/%zz", "/console/threads"},
		{"", "/console/threads"},
	} {
		// The form before sign-in carries next; a signed-in visit to the form and the
		// sign-in post both redirect to it.
		r := f.do(http.MethodPost, "/console/signin", url.Values{"token": {opsToken}, "next": {tc.next}}, nil, nil)
		require.Equal(t, http.StatusSeeOther, r.status, "%q: %s", tc.next, r.body)
		require.Equal(t, tc.want, r.header.Get("Location"), "sign-in with next=%q", tc.next)
		r = f.do(http.MethodGet, "/console/signin?next="+url.QueryEscape(tc.next), nil, ck, nil)
		require.Equal(t, tc.want, r.header.Get("Location"), "signed-in form with next=%q", tc.next)
		requireUnderConsole(t, tc.want)
	}
}

// requireUnderConsole reads loc as a browser does: a path of the gateway's own, under
// /console/ once decoded and its dot segments resolved.
func requireUnderConsole(t *testing.T, loc string) {
	t.Helper()
	base, _ := url.Parse("http://gateway.example/console/signin")
	u, err := base.Parse(loc)
	require.NoError(t, err, loc)
	require.Equal(t, "gateway.example", u.Host, loc)
	require.Equal(t, path.Clean(u.Path), u.Path, "%q keeps dot segments", loc)
	require.True(t, strings.HasPrefix(u.Path, "/console/"), loc)
	require.NotContains(t, u.Path, "\\", loc)
}
