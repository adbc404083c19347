package console

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
)

// A record's and an event's page link to their trace when the admin API gives a link;
// the link is an attribute value, escaped as one, and a script URL is refused.
func TestTraceLinkOnPages(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(viewerToken)
	f.admin.detail = recordDetail()
	f.admin.event = admin.EventDetail{Event: inbox.Event{ID: "e1", Source: "github", Type: "check_run"}}

	for _, path := range []string{"/console/notifications/r1", "/console/events/e1"} {
		r := f.do(http.MethodGet, path, nil, ck, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, r.body, `id="trace-link"`, "%s: no template or no trace, no link", path)
	}

	f.admin.detail.TraceURL = `https://traces.example/trace/4bf92f3577b34da6a3ce929d0e0e4736?a=1&b="><script>`
	f.admin.event.TraceURL = f.admin.detail.TraceURL
	for _, path := range []string{"/console/notifications/r1", "/console/events/e1"} {
		r := f.do(http.MethodGet, path, nil, ck, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, r.body, `id="trace-link" href="https://traces.example/trace/4bf92f3577b34da6a3ce929d0e0e4736?a=1&amp;b=%22%3e%3cscript%3e"`, path)
		require.NotContains(t, r.body, `"><script>`, path)
	}

	f.admin.detail.TraceURL = "javascript:alert(1)"
	r := f.do(http.MethodGet, "/console/notifications/r1", nil, ck, nil)
	require.NotContains(t, r.body, "javascript:alert")
}
