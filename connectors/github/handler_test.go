package github

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

func issueCommentBody(t *testing.T) []byte {
	t.Helper()
	return encode(t, pick(t, examples(t, "api.github.com"), "issue_comment", "created", nil))
}

func errorMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	return e.Error.Message
}

// TestSHA1SignatureRejected: go-github would accept a sha1 signature; only
// sha256 is.
func TestSHA1SignatureRejected(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	req := newDelivery("acme", "issue_comment", "d-1", issueCommentBody(t))
	req.Header.Del("X-Hub-Signature-256")
	req.Header.Set("X-Hub-Signature", "sha1=0000000000000000000000000000000000000000")
	rec := h.do(req)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "missing or invalid credentials", errorMessage(t, rec.Body.Bytes()))
	assert.Empty(t, h.fake.Calls(), "nothing stored")
}

// TestMissingEventType: a request without the event type is refused before
// anything is read (the delivery id is the conformance suite's).
func TestMissingEventType(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	req := newDelivery("acme", "issue_comment", "d-2", issueCommentBody(t))
	req.Header.Del("X-GitHub-Event")
	rec := h.do(req)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, errorMessage(t, rec.Body.Bytes()), "missing X-Github-Event")
	assert.Empty(t, h.fake.Calls())
}

func TestUnknownEventStored(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	rec := h.deliver("made_up_event", "d-1", []byte(`{"action":"whatever"}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	out := decodeOutcome(t, rec)
	assert.Equal(t, inbox.EventIgnored, out.Status)
	assert.NotEmpty(t, out.EventID)
	call, ok := h.fake.Last()
	require.True(t, ok)
	assert.Equal(t, "made_up_event", call.Event.Type)
	assert.JSONEq(t, `{"action":"whatever"}`, string(call.Event.Body))
}

func TestLenientPayload(t *testing.T) {
	// A real octokit example with a timestamp go-github cannot parse
	// ("2018-04-25 20:42:10"): the field is left out, the event is read.
	m := pick(t, examples(t, "api.github.com"), "check_run", "rerequested", nil)
	h := newHarness(t, testConfig(), 0)
	rec := h.deliver("check_run", "d-1", encode(t, m))
	require.Less(t, rec.Code, 300, rec.Body.String())
	out := decodeOutcome(t, rec)
	assert.NotEqual(t, inbox.EventInvalid, out.Status)
	call, _ := h.fake.Last()
	assert.Empty(t, call.Event.Error)

	_, dropped, err := parseLenient("check_run", encode(t, m))
	require.NoError(t, err)
	assert.NotEmpty(t, dropped)
	for _, p := range dropped {
		assert.Contains(t, p, "_at", "only the unparseable timestamps are left out")
	}
}

func TestPing(t *testing.T) {
	m := pick(t, examples(t, "api.github.com"), "ping", "", nil)
	h := newHarness(t, testConfig(), 0)
	rec := h.deliver("ping", "d-ping", encode(t, m))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, ok := h.fake.Last()
	require.True(t, ok, "ping stored")
	assert.Equal(t, "ping", call.Event.Type)
}

// A signed webhook cannot pass for a delivery the gateway read from GitHub's API: the
// header backfill stores its provenance in is never kept from a request, so replay and
// explain never take the webhook's items as verified by github-api.
func TestWebhookCannotClaimBackfill(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	req := newDelivery("acme", "issue_comment", "d-planted", issueCommentBody(t))
	req.Header.Set(connectors.BackfillHeader, VerifiedByAPI)
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.fake.Last()
	assert.Empty(t, connectors.Header(call.Event.Headers, connectors.BackfillHeader))
	for _, n := range call.Notifications {
		assert.Equal(t, VerifiedBy, n.Metadata[connectors.MetaVerifiedBy])
	}
}

func TestStoredEvent(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	rec := h.deliver("issue_comment", "d-1", issueCommentBody(t))
	require.Equal(t, http.StatusOK, rec.Code)
	call, _ := h.fake.Last()
	ev := call.Event
	assert.Equal(t, "github", ev.Source)
	assert.Equal(t, "acme", ev.Connector)
	assert.Equal(t, "d-1", ev.DeliveryID)
	assert.Equal(t, "issue_comment", ev.Type)
	assert.Equal(t, fixedNow(), ev.ReceivedAt)
	assert.Equal(t, "42", ev.Headers["X-Github-Hook-Id"])
	assert.Equal(t, "GitHub-Hookshot/abc123", ev.Headers["User-Agent"])
	for k := range ev.Headers {
		assert.NotContains(t, strings.ToLower(k), "signature")
	}

	n := call.Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "Codertocat/Hello-World", Thread: "Codertocat/Hello-World#1"}, n.Thread)
	assert.Equal(t, "all-github", n.Route)
	assert.Equal(t, "Codertocat", n.Metadata[connectors.MetaAuthor])
	assert.Equal(t, false, n.Metadata[connectors.MetaAuthorIsBot])
	assert.Equal(t, "OWNER", n.Metadata[connectors.MetaAuthorAssociation])
	assert.Equal(t, []string{"repo", "number", "url", "author"}, attrKeys(n.Attributes))
	assert.Equal(t, "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400", n.Attributes.String("url"))
	var payload map[string]any
	require.NoError(t, json.Unmarshal(n.Payload, &payload))
	assert.Equal(t, "You are totally right! I'll get this fixed right away.", payload["body"])
}

func attrKeys(a inbox.Attributes) []string {
	var out []string
	for _, kv := range a {
		out = append(out, kv.Key)
	}
	return out
}

func TestFormEncodedDelivery(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	form := []byte(url.Values{"payload": {string(issueCommentBody(t))}}.Encode())
	req := newDelivery("acme", "issue_comment", "d-1", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := h.do(req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func TestIngestFailureIs500(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	h.fake.Err = errors.New("disk full")
	rec := h.deliver("issue_comment", "d-1", issueCommentBody(t))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.NotContains(t, rec.Body.String(), "disk full")
}

func TestEmptySecretIsConfigError(t *testing.T) {
	_, err := NewHandler([]Config{{Name: "acme"}}, nil, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "github[0].secret: required (unsigned GitHub deliveries are never accepted)")

	err = connectors.ValidateConfigs("github", []Config{{Name: "a", Secret: "s"}, {Name: "a", Secret: "s"}, {Secret: "s"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `github[1].name: duplicate connector name "a" (also github[0])`)
	assert.Contains(t, err.Error(), "github[2].name: required")
	assert.Contains(t, err.Error(), "github[0].secret: must be at least 16 bytes")
	require.NoError(t, connectors.ValidateConfigs("github", []Config{{Name: "a", Secret: "0123456789abcdef"}}))
}

func TestBotComments(t *testing.T) {
	ex := examples(t, "api.github.com")
	for _, tc := range []struct {
		name, login, typ string
		routed           bool
	}{
		{"other bot", "dependabot[bot]", "Bot", false},
		{"allowed bot", "renovate[bot]", "Bot", true},
		{"the bot itself", "octocat", "User", false},
		{"a human", "someone", "User", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			m := pick(t, ex, "issue_comment", "created", nil)
			set(m, "comment.user.login", tc.login)
			set(m, "comment.user.type", tc.typ)
			rec := h.deliver("issue_comment", "d-1", encode(t, m))
			call, ok := h.fake.Last()
			require.True(t, ok, "stored either way")
			if tc.routed {
				require.Equal(t, http.StatusOK, rec.Code)
				require.Len(t, call.Notifications, 1)
				assert.Equal(t, tc.typ == "Bot", call.Notifications[0].Metadata[connectors.MetaAuthorIsBot])
				return
			}
			require.Equal(t, http.StatusAccepted, rec.Code)
			assert.Equal(t, inbox.EventIgnored, decodeOutcome(t, rec).Status)
			assert.Empty(t, call.Notifications)
			assert.Contains(t, call.Event.Error, tc.login)
		})
	}
}

func TestCommentEditSharesDedupeKey(t *testing.T) {
	ex := examples(t, "api.github.com")
	h := newHarness(t, testConfig(), 0)
	require.Equal(t, http.StatusOK, h.deliver("issue_comment", "d-1", encode(t, pick(t, ex, "issue_comment", "created", nil))).Code)
	require.Equal(t, http.StatusOK, h.deliver("issue_comment", "d-2", encode(t, pick(t, ex, "issue_comment", "edited", nil))).Code)
	calls := h.fake.Calls()
	require.Len(t, calls, 2)
	created, edited := calls[0].Notifications[0], calls[1].Notifications[0]
	assert.Equal(t, created.DedupeKey, edited.DedupeKey)
	assert.NotEmpty(t, created.SourceID, "the issue's number")
	assert.Equal(t, created.Attributes.String("number"), created.SourceID)
	assert.Equal(t, created.Thread, edited.Thread)
	assert.NotEqual(t, created.Summary, edited.Summary)
}

func TestMessageRoute(t *testing.T) {
	m := pick(t, examples(t, "api.github.com"), "issue_comment", "created", nil)
	set(m, "comment.body", "@octocat please rebase <!-- bot:ignore -->and rerun the tests")

	routes := []connectors.RouteConfig{{
		Name:      "mentions",
		Match:     connectors.RouteMatch{Source: inbox.StringList{"github"}, Kind: inbox.StringList{"comment"}},
		Thread:    connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{.Repo}}#{{.Number}}"},
		DeliverAs: inbox.DeliverAsMessage,
	}}
	router, err := connectors.NewRouter(routes, []string{"coder"})
	require.NoError(t, err)
	ns, errs := router.Route(itemsFor(t, "issue_comment", encode(t, m)))
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	n := ns[0]
	assert.Equal(t, inbox.DeliverAsMessage, n.DeliverAs)
	assert.Equal(t, "@octocat please rebase and rerun the tests", n.Summary)
	assert.Equal(t, "Codertocat", n.Attributes.String("name"))
	assert.Equal(t, "github", n.Attributes.String("from"))
	assert.Equal(t, inbox.PriorityHigh, n.Priority, "mentions of the bot are high")
	assert.Equal(t, "true", n.Attributes.String("mention"))
}

// itemsFor maps one payload without HTTP.
func itemsFor(t *testing.T, event string, body []byte) []connectors.Item {
	t.Helper()
	parsed, err := gh.ParseWebHook(event, body)
	require.NoError(t, err)
	cfg := testConfig().WithDefaults()
	m := mapper{cfg: &cfg, ci: NewMemoryCIState(0), log: slog.New(slog.DiscardHandler), event: event}
	return m.items(context.Background(), parsed)
}
