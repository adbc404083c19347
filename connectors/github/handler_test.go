package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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

func TestSignatureRejected(t *testing.T) {
	body := issueCommentBody(t)
	for name, prepare := range map[string]func(r *http.Request){
		"bad signature":     func(r *http.Request) { r.Header.Set("X-Hub-Signature-256", sign("wrong secret", body)) },
		"missing signature": func(r *http.Request) { r.Header.Del("X-Hub-Signature-256") },
		"garbage signature": func(r *http.Request) { r.Header.Set("X-Hub-Signature-256", "sha256=zz") },
		"sha1 only": func(r *http.Request) {
			r.Header.Del("X-Hub-Signature-256")
			r.Header.Set("X-Hub-Signature", "sha1=0000000000000000000000000000000000000000")
		},
		"body changed after signing": func(r *http.Request) {
			changed := bytes.Replace(body, []byte("totally right"), []byte("totally wrong"), 1)
			r.Body = io.NopCloser(bytes.NewReader(changed))
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			req := newDelivery("acme", "issue_comment", "d-1", body)
			prepare(req)
			rec := h.do(req)
			require.Equal(t, http.StatusUnauthorized, rec.Code)
			assert.Equal(t, "missing or invalid credentials", errorMessage(t, rec.Body.Bytes()), "no detail for a forger")
			assert.Empty(t, h.fake.Calls(), "nothing stored")
		})
	}
}

// TestMissingHeaders: a request without the event type or the delivery id is
// refused before anything is read; without the id a captured body would replay as new.
func TestMissingHeaders(t *testing.T) {
	for _, header := range []string{"X-GitHub-Event", "X-GitHub-Delivery"} {
		t.Run(header, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			req := newDelivery("acme", "issue_comment", "d-2", issueCommentBody(t))
			req.Header.Del(header)
			rec := h.do(req)
			require.Equal(t, http.StatusBadRequest, rec.Code)
			assert.Contains(t, errorMessage(t, rec.Body.Bytes()), "missing "+http.CanonicalHeaderKey(header))
			assert.Empty(t, h.fake.Calls())
		})
	}
}

// TestVerifiedButUnreadable: once the signature holds, a body that cannot be read is
// stored as invalid (for replay) and answered 202: a 400 would only be retried.
func TestVerifiedButUnreadable(t *testing.T) {
	for name, c := range map[string]struct {
		event, contentType, body, reason string
	}{
		"malformed JSON":      {"issue_comment", "application/json", `{"action": "created", "comment": {`, "malformed JSON payload"},
		"unmapped, malformed": {"fork", "application/json", `{"forkee": `, "malformed JSON payload"},
		"malformed form":      {"issue_comment", "application/x-www-form-urlencoded", `payload=%zz`, "malformed form body"},
		"not an object":       {"check_run", "application/json", `[]`, "decode check_run payload"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			req := newDelivery("acme", c.event, "d-1", []byte(c.body))
			req.Header.Set("Content-Type", c.contentType)
			rec := h.do(req)
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			assert.Equal(t, inbox.EventInvalid, decodeOutcome(t, rec).Status)
			call, ok := h.fake.Last()
			require.True(t, ok, "stored")
			assert.Contains(t, call.Event.Error, c.reason)
			assert.Equal(t, "d-1", call.Event.DeliveryID)
		})
	}
}

func TestUnknownConnector(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	rec := h.do(newDelivery("nope", "issue_comment", "d-1", issueCommentBody(t)))
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, errorMessage(t, rec.Body.Bytes()), `"nope"`)
}

func TestOverBodyLimit(t *testing.T) {
	const limit = 64 << 10
	big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), limit)...)
	big = append(big, `"}`...)

	t.Run("content-length", func(t *testing.T) {
		h := newHarness(t, testConfig(), limit)
		rec := h.do(newDelivery("acme", "issue_comment", "d-1", big))
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	})
	t.Run("chunked", func(t *testing.T) {
		h := newHarness(t, testConfig(), limit)
		req := newDelivery("acme", "issue_comment", "d-1", big)
		req.ContentLength = -1 // no length up front: the limit trips while reading
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(big)))
		rec := h.do(req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
		assert.Empty(t, h.fake.Calls())
	})
	t.Run("max bytes reader", func(t *testing.T) {
		h := newHarness(t, testConfig(), 0)
		req := newDelivery("acme", "issue_comment", "d-1", big)
		req.Body = http.MaxBytesReader(nil, io.NopCloser(bytes.NewReader(big)), 1024)
		rec := h.do(req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	})
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

func TestRedeliveryIsDuplicate(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	body := issueCommentBody(t)

	first := h.deliver("issue_comment", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body)
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	out := decodeOutcome(t, first)
	assert.False(t, out.Duplicate)
	assert.Equal(t, inbox.EventRouted, out.Status)
	assert.Equal(t, 1, out.Records)

	again := h.deliver("issue_comment", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body)
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	dup := decodeOutcome(t, again)
	assert.True(t, dup.Duplicate)
	assert.Equal(t, out.EventID, dup.EventID)

	calls := h.fake.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[1].Duplicate, "the inbox saw the redelivery as a duplicate")
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
