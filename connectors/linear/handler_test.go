package linear

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/watch"
)

const testSecret = "lin_wh_0123456789abcdef0123456789"

var testNow = time.Date(2026, 11, 2, 9, 15, 0, 0, time.UTC)

// ownIDs is a reply.Own over recorded platform ids.
type ownIDs map[string]bool

func (o ownIDs) OwnReply(_ context.Context, source, _, id string) (bool, error) {
	return source == Source && o[id], nil
}

// harness is one connector behind a real server, its answers and look-ups going to a
// stand-in of Linear's API; every item reaches the kind's default thread (a route that
// names only its agent).
type harness struct {
	e   http.Handler
	ing *connectorstest.Ingester
	api *standIn
	now time.Time
}

func newHarness(t *testing.T, mod func(*Config), opts ...Option) *harness {
	t.Helper()
	api := newStandIn(t)
	cfg := Config{Name: "acme", WebhookSecret: testSecret, AccessToken: "lin_oauth_token_0123456789", APIURL: api.srv.URL}
	if mod != nil {
		mod(&cfg)
	}
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name: "linear", Match: connectors.RouteMatch{Source: inbox.StringList{Source}}, Thread: connectors.ThreadConfig{Agent: "coder"},
	}}, []string{"coder"}, connectors.WithSources(Source), connectors.WithDefaultThreads(Source))
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	h, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, ing, log), log, func() time.Time { return testNow }, opts...)
	require.NoError(t, err)
	h.Mount(srv.Echo())
	return &harness{e: srv.Echo(), ing: ing, api: api, now: testNow}
}

// sample is an embedded sample dated now, as the connector's sender sends it.
func (h *harness) sample(t *testing.T, name string) []byte {
	t.Helper()
	s, err := sender{key: []byte(testSecret)}.Sample(name, h.now)
	require.NoError(t, err)
	return s.Body
}

func (h *harness) post(t *testing.T, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/linear/acme", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(DeliveryHeader, "d-"+strconv.Itoa(len(h.ing.Calls())))
	req.Header.Set(SignatureHeader, Sign([]byte(testSecret), body))
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func (h *harness) last(t *testing.T) connectorstest.Ingested {
	t.Helper()
	got, ok := h.ing.Last()
	require.True(t, ok, "nothing ingested")
	return got
}

func set(t *testing.T, body []byte, path string, value string) []byte {
	t.Helper()
	out, err := connectors.SetJSON(body, path, []byte(value))
	require.NoError(t, err)
	return out
}

// TestAgentSessionCreated: a person mentioning the agent on ENG-123 is one notification
// in the issue's thread, high priority, the session kept as the place to answer.
func TestAgentSessionCreated(t *testing.T) {
	h := newHarness(t, nil)
	rec := h.post(t, h.sample(t, "AgentSessionEvent.created"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := h.last(t)
	require.Len(t, got.Notifications, 1)
	n := got.Notifications[0]
	assert.Equal(t, inbox.ThreadKey{Agent: "coder", Resource: "linear/acme", Thread: "ENG-123"}, n.Thread)
	assert.Equal(t, KindSessionCreated, n.Kind)
	assert.Equal(t, inbox.PriorityHigh, n.Priority)
	assert.Contains(t, n.Summary, "Ada Lovelace asked the agent on ENG-123")
	to, ok := reply.FromMetadata(n.Metadata)
	require.True(t, ok)
	p, err := reply.PlaceOf[Place](to)
	require.NoError(t, err)
	assert.Equal(t, Place{Issue: "ENG-123", IssueID: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", AgentSessionID: "b2f1e7a4-4c39-4a8e-9d57-1e6f0a2c3d48"}, p)
	assert.Equal(t, VerifiedBy, n.Metadata[connectors.MetaVerifiedBy])

	rec = h.post(t, h.sample(t, "AgentSessionEvent.prompted"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	n = h.last(t).Notifications[0]
	assert.Equal(t, KindSessionPrompted, n.Kind)
	assert.Equal(t, "ENG-123", n.Thread.Thread, "the same issue's thread")
	assert.Contains(t, n.Summary, "Only the EU stores are affected")
}

// TestCommentPlaceIsItsThread: a comment's answer replies in its thread: under the
// thread's first comment (its parent), or under the comment itself when it starts one.
func TestCommentPlaceIsItsThread(t *testing.T) {
	h := newHarness(t, nil)
	body := h.sample(t, "Comment.create")
	require.Equal(t, http.StatusOK, h.post(t, body).Code)
	to, _ := reply.FromMetadata(h.last(t).Notifications[0].Metadata)
	p, err := reply.PlaceOf[Place](to)
	require.NoError(t, err)
	assert.Equal(t, "c0a3b1d2-5e6f-4a7b-8c9d-0e1f2a3b4c5d", p.ParentCommentID, "the thread's first comment")

	root := set(t, set(t, body, "data.parentId", "null"), "data.id", `"f0f0f0f0-0000-4000-8000-000000000001"`)
	require.Equal(t, http.StatusOK, h.post(t, root).Code)
	to, _ = reply.FromMetadata(h.last(t).Notifications[0].Metadata)
	p, _ = reply.PlaceOf[Place](to)
	assert.Equal(t, "f0f0f0f0-0000-4000-8000-000000000001", p.ParentCommentID, "a new thread under the comment itself")
}

// TestAuthorGate: only the workspace's members reach the agent, and a session only
// through the person who started it; others are stored ignored.
func TestAuthorGate(t *testing.T) {
	const guest, stranger = "a0000000-0000-4000-8000-00000000000a", "b0000000-0000-4000-8000-00000000000b"
	h := newHarness(t, nil)
	h.api.users[guest] = member{Guest: true, Active: true}
	h.api.users[stranger] = member{Active: true}

	comment := set(t, h.sample(t, "Comment.create"), "data.userId", strconv.Quote(guest))
	comment = set(t, comment, "data.user.id", strconv.Quote(guest))
	require.Equal(t, http.StatusAccepted, h.post(t, comment).Code)
	got := h.last(t)
	assert.Equal(t, inbox.EventIgnored, got.Event.Status)
	assert.Equal(t, reasonNotMember, got.Event.Error, "a guest")

	external := set(t, set(t, h.sample(t, "Comment.create"), "data.userId", "null"), "data.user", "null")
	require.Equal(t, http.StatusAccepted, h.post(t, external).Code)
	assert.Equal(t, reasonNotMember, h.last(t).Event.Error, "an external user's synced comment")

	prompt := set(t, h.sample(t, "AgentSessionEvent.prompted"), "agentActivity.userId", strconv.Quote(stranger))
	prompt = set(t, prompt, "agentActivity.user.id", strconv.Quote(stranger))
	require.Equal(t, http.StatusAccepted, h.post(t, prompt).Code)
	assert.Equal(t, reasonNotCreator, h.last(t).Event.Error, "a member who did not start the session")

	other := set(t, h.sample(t, "AgentSessionEvent.created"), "organizationId", `"c0000000-0000-4000-8000-00000000000c"`)
	require.Equal(t, http.StatusAccepted, h.post(t, other).Code)
	assert.Equal(t, reasonOtherWorkspace, h.last(t).Event.Error, "another workspace that installed the same application")

	guests := newHarness(t, func(c *Config) { c.AllowGuests = true })
	guests.api.users[guest] = member{Guest: true, Active: true}
	require.Equal(t, http.StatusOK, guests.post(t, comment).Code, "allow_guests lets guests through")

	h.api.mu.Lock()
	h.api.down = true
	h.api.mu.Unlock()
	fresh := set(t, comment, "data.userId", `"d0000000-0000-4000-8000-00000000000d"`)
	fresh = set(t, fresh, "data.user.id", `"d0000000-0000-4000-8000-00000000000d"`)
	assert.Equal(t, http.StatusServiceUnavailable, h.post(t, fresh).Code, "an author not judged is not let through: Linear delivers again")
}

// TestAgentNeverHearsItself: a comment written as the agent (the viewer the API
// reports), or recorded as one of its answers, is stored ignored as its own.
func TestAgentNeverHearsItself(t *testing.T) {
	h := newHarness(t, nil, WithOwnReplies(ownIDs{"e5d4c3b2-a190-4f8e-9d7c-6b5a49382716": true}))
	require.Equal(t, http.StatusAccepted, h.post(t, h.sample(t, "Comment.create")).Code)
	assert.Equal(t, reply.OwnReason, h.last(t).Event.Error, "recorded as an answer")

	mine := set(t, h.sample(t, "Comment.create"), "data.id", `"f1000000-0000-4000-8000-000000000001"`)
	mine = set(t, mine, "data.userId", strconv.Quote(testViewer))
	mine = set(t, mine, "data.user.id", strconv.Quote(testViewer))
	require.Equal(t, http.StatusAccepted, h.post(t, mine).Code)
	got := h.last(t)
	assert.Equal(t, inbox.EventIgnored, got.Event.Status)
	assert.Equal(t, reply.OwnReason, got.Event.Error, "written as the agent")
	assert.Contains(t, h.api.ops(), "SignalgateViewer")
}

// TestIssueWatchEndsWhenDone: an issue moved to a completed (or canceled) state ends
// the watches of ENG-123; a project's items name it by id and by slug id.
func TestIssueWatchEndsWhenDone(t *testing.T) {
	h := newHarness(t, nil)
	require.Equal(t, http.StatusOK, h.post(t, h.sample(t, "Issue.update")).Code)
	n := h.last(t).Notifications[0]
	assert.Contains(t, n.Summary, "is completed (Done)")
	items, err := (&Handler{conns: map[string]*conn{"acme": {cfg: Config{Name: "acme", OrganizationID: testOrg}}}, offline: true}).
		Items(t.Context(), &inbox.Event{Connector: "acme", Body: h.sample(t, "Issue.update")})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, watch.EndClosed, items[0].Ends)
	assert.Equal(t, []string{"ENG-123", "project:3f6a9c1e-8b2d-4e7f-a0c5-d9e8f7a6b5c4"}, items[0].WatchResources)

	started := set(t, h.sample(t, "Issue.update"), "data.state.type", `"started"`)
	items, err = (&Handler{conns: map[string]*conn{"acme": {cfg: Config{Name: "acme"}}}, offline: true}).
		Items(t.Context(), &inbox.Event{Connector: "acme", Body: started})
	require.NoError(t, err)
	assert.Empty(t, items[0].Ends, "a started issue stays watched")

	canceled := set(t, h.sample(t, "Issue.update"), "data.state.type", `"canceled"`)
	items, _ = (&Handler{conns: map[string]*conn{"acme": {cfg: Config{Name: "acme"}}}, offline: true}).
		Items(t.Context(), &inbox.Event{Connector: "acme", Body: canceled})
	assert.Equal(t, watch.EndClosed, items[0].Ends)

	items, err = (&Handler{conns: map[string]*conn{"acme": {cfg: Config{Name: "acme"}}}, offline: true}).
		Items(t.Context(), &inbox.Event{Connector: "acme", Body: h.sample(t, "Project.update")})
	require.NoError(t, err)
	assert.Equal(t, []string{"project:3f6a9c1e-8b2d-4e7f-a0c5-d9e8f7a6b5c4", "project:8e3a2c1b9f04"}, items[0].WatchResources)
}

// TestWatchResource: issues by identifier (upper-cased), projects by id or slug.
func TestWatchResource(t *testing.T) {
	for in, want := range map[string]watch.Resource{
		"eng-123": {Canonical: "ENG-123"},
		"ENG-123": {Canonical: "ENG-123"},
		"project:3F6A9C1E-8B2D-4E7F-A0C5-D9E8F7A6B5C4": {Canonical: "project:3f6a9c1e-8b2d-4e7f-a0c5-d9e8f7a6b5c4", Whole: true},
		"project:checkout-revamp-8e3a2c1b9f04":         {Canonical: "project:8e3a2c1b9f04", Whole: true},
		"project:8E3A2C1B9F04":                         {Canonical: "project:8e3a2c1b9f04", Whole: true},
	} {
		got, err := WatchResource(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "ENG", "ENG-0", "123", "ENG-12a", "project:", "project:acme", "acme/api#1"} {
		_, err := WatchResource(bad)
		assert.Error(t, err, bad)
	}
}

// TestRefusals: what cannot be verified is refused before anything is stored: no
// delivery id (400), no or a wrong signature, a body whose signed webhookTimestamp
// cannot be read (401, as @linear/sdk refuses it), an unknown connector (404).
func TestRefusals(t *testing.T) {
	h := newHarness(t, nil)
	body := h.sample(t, "Comment.create")
	do := func(path string, body []byte, mod func(http.Header)) int {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set(DeliveryHeader, "d-1")
		req.Header.Set(SignatureHeader, Sign([]byte(testSecret), body))
		if mod != nil {
			mod(req.Header)
		}
		rec := httptest.NewRecorder()
		h.e.ServeHTTP(rec, req)
		return rec.Code
	}
	assert.Equal(t, http.StatusBadRequest, do("/webhooks/linear/acme", body, func(h http.Header) { h.Del(DeliveryHeader) }))
	assert.Equal(t, http.StatusUnauthorized, do("/webhooks/linear/acme", body, func(h http.Header) { h.Del(SignatureHeader) }))
	assert.Equal(t, http.StatusUnauthorized, do("/webhooks/linear/acme", body, func(h http.Header) { h.Set(SignatureHeader, "zz") }))
	assert.Equal(t, http.StatusUnauthorized, do("/webhooks/linear/acme", []byte(`{"type": "Comment"`), nil), "no timestamp to prove it fresh")
	assert.Equal(t, http.StatusNotFound, do("/webhooks/linear/other", body, nil))
	assert.Empty(t, h.ing.Calls())
}
