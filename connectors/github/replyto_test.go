package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
)

// replyToOf is the replyTo a routed delivery's notification carries.
func replyToOf(t *testing.T, h *harness) reply.To {
	t.Helper()
	call, ok := h.fake.Last()
	require.True(t, ok)
	require.Len(t, call.Notifications, 1)
	to, ok := reply.FromMetadata(call.Notifications[0].Metadata)
	require.True(t, ok, "metadata.replyTo missing: %v", call.Notifications[0].Metadata)
	return to
}

func TestRecordsCarryReplyTo(t *testing.T) {
	ex := examples(t, "api.github.com")
	h := newHarness(t, testConfig(), 0)

	ic := pick(t, ex, "issue_comment", "created", nil)
	require.Equal(t, http.StatusOK, h.deliver("issue_comment", "d-1", encode(t, ic)).Code)
	num, _ := strconv.Atoi(get(ic, "issue.number").(json.Number).String())
	assert.Equal(t, reply.NewTo("github", "acme", Place{Repo: get(ic, "repository.full_name").(string), Number: num}),
		replyToOf(t, h))

	// A review comment: the answer goes into its thread, whose first comment GitHub
	// takes replies to.
	rc := pick(t, ex, "pull_request_review_comment", "created", nil)
	set(rc, "comment.in_reply_to_id", nil)
	require.Equal(t, http.StatusOK, h.deliver("pull_request_review_comment", "d-2", encode(t, rc)).Code)
	to := replyToOf(t, h)
	assert.Equal(t, get(rc, "comment.id").(json.Number).String(), strconv.FormatInt(placeOf(to).ReviewCommentID, 10))
	assert.NotZero(t, placeOf(to).Number)

	set(rc, "comment.id", json.Number("991"))
	set(rc, "comment.in_reply_to_id", json.Number("990"))
	require.Equal(t, http.StatusOK, h.deliver("pull_request_review_comment", "d-3", encode(t, rc)).Code)
	assert.Equal(t, int64(990), placeOf(replyToOf(t, h)).ReviewCommentID, "a reply in a thread answers the thread")

	pr := pick(t, ex, "pull_request", "opened", nil)
	require.Equal(t, http.StatusOK, h.deliver("pull_request", "d-4", encode(t, pr)).Code)
	to = replyToOf(t, h)
	assert.Zero(t, placeOf(to).ReviewCommentID)
	assert.Equal(t, "acme", to.Connector)
}

// fakeOwn is a hand-written reply.Own: the comment ids recorded as sent replies.
type fakeOwn struct {
	mu    sync.Mutex
	ids   map[string]bool
	err   error
	calls []string
}

func (f *fakeOwn) OwnReply(_ context.Context, source, connector, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, source+"/"+connector+"/"+id)
	return f.ids[id], f.err
}

func ownHarness(t *testing.T, own reply.Own, mods ...func(*Config)) (*harness, *Handler) {
	t.Helper()
	cfg := testConfig()
	cfg.BotLogin = "" // recognised by the recorded id alone, not by the bot's login
	for _, m := range mods {
		m(&cfg)
	}
	return ownHarnessWith(t, cfg, own, slog.New(slog.DiscardHandler))
}

func ownHarnessWith(t *testing.T, cfg Config, own reply.Own, log *slog.Logger) (*harness, *Handler) {
	t.Helper()
	srv := server.New(server.Config{}, slog.New(slog.DiscardHandler))
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	fake := connectorstest.NewIngester()
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, fake, log), log, fixedNow, WithOwnReplies(own))
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	return &harness{t: t, e: srv.Echo(), ing: fake, fake: fake}, handler
}

// The agent's own comment coming back is stored ignored "own reply" before any other
// rule (here it even mentions the bot); others' comments route as before.
func TestOwnRepliesAreIgnored(t *testing.T) {
	ex := examples(t, "api.github.com")
	own := &fakeOwn{ids: map[string]bool{"4242": true, "5151": true}}
	h, handler := ownHarness(t, own)

	ic := pick(t, ex, "issue_comment", "created", nil)
	set(ic, "comment.id", json.Number("4242"))
	set(ic, "comment.body", "@octocat here is the answer\n\n<!-- signalgate:reply:r-1 -->")
	rec := h.deliver("issue_comment", "d-own", encode(t, ic))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	call, _ := h.fake.Last()
	assert.Equal(t, inbox.EventIgnored, call.Event.Status)
	assert.Equal(t, reply.OwnReason, call.Event.Error)
	assert.Empty(t, call.Notifications)
	assert.Equal(t, []string{"github/acme/4242"}, own.calls)

	// The same through replay: not mapped, for the same reason.
	_, err := handler.Items(context.Background(), &call.Event)
	var nm *connectors.NotMapped
	require.ErrorAs(t, err, &nm)
	assert.Equal(t, reply.OwnReason, nm.Reason)

	rc := pick(t, ex, "pull_request_review_comment", "created", nil)
	set(rc, "comment.id", json.Number("5151"))
	require.Equal(t, http.StatusAccepted, h.deliver("pull_request_review_comment", "d-own-2", encode(t, rc)).Code)
	call, _ = h.fake.Last()
	assert.Equal(t, reply.OwnReason, call.Event.Error)

	set(ic, "comment.id", json.Number("4243"))
	require.Equal(t, http.StatusOK, h.deliver("issue_comment", "d-other", encode(t, ic)).Code)
	call, _ = h.fake.Last()
	assert.Len(t, call.Notifications, 1, "someone else's comment routes")
}

// When the recorded replies cannot be read, the delivery is not stored as if it were
// someone else's comment: it fails, and GitHub shows the failed delivery.
func TestOwnReplyLookupFailureStoresNothing(t *testing.T) {
	ex := examples(t, "api.github.com")
	h, _ := ownHarness(t, &fakeOwn{err: errors.New("database is locked")})
	before := len(h.fake.Calls())
	rec := h.deliver("issue_comment", "d-1", encode(t, pick(t, ex, "issue_comment", "created", nil)))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Len(t, h.fake.Calls(), before)
}

// The comment event can overtake the outbox recording the comment id: a comment that
// carries a reply's hidden marker and was written by the configured bot, or through
// this App, is the gateway's own. The marker in a stranger's comment (quoted, or typed
// on purpose to silence the agent), or posted through another App, is not.
func TestMarkedOwnReplyIgnoredBeforeItIsRecorded(t *testing.T) {
	ex := examples(t, "api.github.com")
	_, pemKey := testAppKey(t)
	own := &fakeOwn{ids: map[string]bool{}} // nothing recorded yet
	h, _ := ownHarness(t, own, func(c *Config) {
		c.BotLogin = "signalgate-bot"
		c.AllowedBots = append(c.AllowedBots, "mallory[bot]") // routed, so only the marker could silence it
		c.App = &AppConfig{ID: 4242, PrivateKey: secretOf(pemKey), InstallationID: 99}
	})
	const body = "here is the answer\n\n<!-- signalgate:reply:r-1 -->"
	comment := func(id int, login string, app any) map[string]any {
		ic := pick(t, ex, "issue_comment", "created", nil)
		set(ic, "comment.id", json.Number(fmt.Sprint(id)))
		set(ic, "comment.body", body)
		set(ic, "comment.user.login", login)
		set(ic, "comment.performed_via_github_app", app)
		return ic
	}
	for i, tc := range []struct {
		name string
		ic   map[string]any
		own  bool
	}{
		{"the bot login", comment(7001, "signalgate-bot", nil), true},
		{"this App", comment(7002, "signalgate[bot]", map[string]any{"id": 4242, "slug": "signalgate"}), true},
		{"a stranger", comment(7003, "mallory", nil), false},
		{"a stranger through another App", comment(7004, "mallory[bot]", map[string]any{"id": 9999, "slug": "mallory"}), false},
	} {
		rec := h.deliver("issue_comment", fmt.Sprintf("d-marked-%d", i), encode(t, tc.ic))
		call, _ := h.fake.Last()
		if tc.own {
			require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", tc.name, rec.Body.String())
			assert.Equal(t, reply.OwnReason, call.Event.Error, tc.name)
			assert.Empty(t, call.Notifications, tc.name)
		} else {
			require.Equal(t, http.StatusOK, rec.Code, "%s: %s", tc.name, rec.Body.String())
			assert.NotEqual(t, reply.OwnReason, call.Event.Error, tc.name)
			assert.Len(t, call.Notifications, 1, tc.name)
		}
	}
}
