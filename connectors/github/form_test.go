package github

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// TestFormDeliveryAsGitHubSendsIt: a hook set to the form content type posts
// payload=<JSON>, signed over the form as sent; go-github reads it the same way.
func TestFormDeliveryAsGitHubSendsIt(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	js := issueCommentBody(t)
	form := []byte(url.Values{"payload": {string(js)}}.Encode())
	req := newDelivery("acme", "issue_comment", "d-form", form)
	req.Header.Set("Content-Type", formType)
	read, err := gh.ValidatePayload(req.Clone(t.Context()), []byte(testSecret))
	require.NoError(t, err, "go-github reads the delivery as GitHub's")
	require.JSONEq(t, string(js), string(read))
	req = newDelivery("acme", "issue_comment", "d-form", form)
	req.Header.Set("Content-Type", formType)
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	last, _ := h.fake.Last()
	assert.Equal(t, inbox.EventRouted, last.Event.Status)
	assert.JSONEq(t, string(js), string(last.Event.Body), "the stored body is the JSON, not the form")
}

// TestUnreadableBodySaysWhatWasReceived: a body stored invalid says what arrived
// instead of JSON (a JSON body labelled as a form, a form whose content type a proxy
// rewrote, a form without its payload field), never quoting the body.
func TestUnreadableBodySaysWhatWasReceived(t *testing.T) {
	for _, tc := range unreadableBodies(issueCommentBody(t)) {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			req := newDelivery("acme", "issue_comment", "d-1", []byte(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			rec := h.do(req)
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			last, ok := h.fake.Last()
			require.True(t, ok)
			assert.Equal(t, inbox.EventInvalid, last.Event.Status)
			assert.True(t, strings.HasPrefix(last.Event.Error, tc.reason), "reason %q, want it to start with %q", last.Event.Error, tc.reason)
			assert.NotContains(t, last.Event.Error, "Codertocat", "the reason quotes the body")
		})
	}
}

type unreadableBody struct{ name, contentType, body, reason string }

// unreadableBodies are authentic deliveries that are not JSON, and how each reason
// begins.
func unreadableBodies(js []byte) []unreadableBody {
	form := url.Values{"payload": {string(js)}}.Encode()
	return []unreadableBody{
		{"JSON labelled as a form (curl -d)", formType, string(js),
			"received a JSON body under content type application/x-www-form-urlencoded: send it with Content-Type: application/json"},
		{"a form under the JSON content type", "application/json", form,
			"received a form-encoded body (payload=…) under content type application/json: a proxy may have changed the content type"},
		{"a form without its content type", "", form, "received a form-encoded body (payload=…) under no content type"},
		{"a form without payload", formType, "action=created&comment=1",
			"received a form-encoded body (content type application/x-www-form-urlencoded) without a payload field"},
		{"a form whose payload is not JSON", formType, "payload=nope", "malformed JSON in the form's payload field"},
		{"text", "text/plain; charset=utf-8", "not json", "malformed JSON payload (received content type text/plain)"},
		{"broken JSON", "application/json", `{"action": "created", "comment": {`, "malformed JSON payload"},
	}
}

// TestTroubleshootingQuotesUnreadableBodies: docs/troubleshooting.md quotes how each
// reason begins, as the code writes it.
func TestTroubleshootingQuotesUnreadableBodies(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "troubleshooting.md"))
	require.NoError(t, err)
	doc := strings.Join(strings.Fields(string(raw)), " ") // as rendered: lines joined
	for _, tc := range unreadableBodies(nil) {
		assert.True(t, strings.Contains(doc, "`"+tc.reason), "docs/troubleshooting.md does not quote %q", tc.reason)
	}
}
