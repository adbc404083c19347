package console

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
)

// With routes configured, a sample the connector made nothing of says why no route
// was tried, not that there are no routes.
func TestExplainSaysWhyNoRouteWasTried(t *testing.T) {
	f := newFixture(t, testTokens)
	note := "connector github/acme produced nothing to route: it would be stored as invalid: body is not JSON"
	f.admin.explained = &admin.Explanation{Event: admin.ExplainedEvent{Source: "github", Connector: "acme", Type: "issues"},
		Status: inbox.EventInvalid, Reason: "body is not JSON", Items: []admin.ExplainedItem{}, Routes: []admin.RouteResult{},
		RoutesNote: note, Notifications: []admin.Outcome{}}
	ck := f.signIn(opsToken)
	r := f.do(http.MethodPost, "/console/explain", url.Values{"csrf": {f.csrf(ck)}, "connector": {"github/acme"},
		"headers": {"X-GitHub-Event: issues"}, "body": {"not json"}}, ck, nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<p class="empty" id="explain-routes-note">No route was tried: `+note+`.</p>`)
	require.NotContains(t, r.body, "No routes are configured")
}
