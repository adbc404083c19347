package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// commentEvent is the webhook GitHub sends about a comment the fake holds: an octokit
// example carrying the comment's id, body and author, and app (performed_via_github_app).
func commentEvent(t *testing.T, event string, c map[string]any, app any) []byte {
	t.Helper()
	p := pick(t, examples(t, "api.github.com"), event, "created", nil)
	fillComment(p, event, c, app)
	return encode(t, p)
}

func fillComment(p map[string]any, event string, c map[string]any, app any) {
	set(p, "comment.id", c["id"])
	set(p, "comment.body", c["body"])
	set(p, "comment.user.login", get(c, "user.login"))
	set(p, "comment.performed_via_github_app", app)
	if event == "pull_request_review_comment" {
		set(p, "comment.in_reply_to_id", c["in_reply_to_id"])
	}
}

// raceProxy stands in front of the fake GitHub: once GitHub has created a comment, it
// delivers the comment's webhook to the handler before passing GitHub's answer on, so
// neither the replier nor the outbox can have recorded the comment's id yet.
type raceProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	recs []*httptest.ResponseRecorder
}

func newRaceProxy(t *testing.T, f *fakeGitHub, h *harness) *raceProxy {
	t.Helper()
	bases := map[string][]byte{}
	for _, ev := range []string{"issue_comment", "pull_request_review_comment"} {
		bases[ev] = encode(t, pick(t, examples(t, "api.github.com"), ev, "created", nil))
	}
	up, err := url.Parse(f.srv.URL)
	require.NoError(t, err)
	rp := &raceProxy{}
	proxy := httputil.NewSingleHostReverseProxy(up)
	proxy.ModifyResponse = func(resp *http.Response) error {
		path := resp.Request.URL.Path
		if resp.Request.Method != http.MethodPost || resp.StatusCode != http.StatusCreated || !strings.Contains(path, "/comments") {
			return nil
		}
		event := "issue_comment"
		if strings.Contains(path, "/pulls/") {
			event = "pull_request_review_comment"
		}
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		c, err := decodeNumbers(raw)
		if err != nil {
			return err
		}
		p, err := decodeNumbers(bases[event])
		if err != nil {
			return err
		}
		fillComment(p, event, c, nil)
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		rec := h.deliver(event, fmt.Sprint("race-", c["id"]), body)
		rp.mu.Lock()
		defer rp.mu.Unlock()
		rp.recs = append(rp.recs, rec)
		return nil
	}
	rp.srv = httptest.NewServer(proxy)
	t.Cleanup(rp.srv.Close)
	return rp
}

// delivered is what the handler answered each delivery so far.
func (rp *raceProxy) delivered() []*httptest.ResponseRecorder {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return slices.Clone(rp.recs)
}

// copyOf is c written by someone else under a new id: the marker copied along.
func copyOf(c map[string]any, login string, id int) map[string]any {
	return map[string]any{"id": json.Number(strconv.Itoa(id)), "body": c["body"], "user": map[string]any{"login": login}}
}

func last(cs []map[string]any) map[string]any { return cs[len(cs)-1] }

// requireOwn asserts the latest delivery was stored ignored as an own reply.
func requireOwn(t *testing.T, h *harness, rec *httptest.ResponseRecorder, what string) inbox.Event {
	t.Helper()
	require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", what, rec.Body.String())
	call, ok := h.fake.Last()
	require.True(t, ok)
	assert.Equal(t, inbox.EventIgnored, call.Event.Status, what)
	assert.Equal(t, reply.OwnReason, call.Event.Error, what)
	assert.Empty(t, call.Notifications, what)
	return call.Event
}

// requireHeard asserts the latest delivery reached the agent.
func requireHeard(t *testing.T, h *harness, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, "%s: %s", what, rec.Body.String())
	call, ok := h.fake.Last()
	require.True(t, ok)
	assert.NotEqual(t, reply.OwnReason, call.Event.Error, what)
	assert.Len(t, call.Notifications, 1, what)
}

func countRequests(f *fakeGitHub, req string) int {
	n := 0
	for _, l := range f.log() {
		if l == req {
			n++
		}
	}
	return n
}

// With a token and no bot_login, GitHub can deliver the reply's comment before the
// outbox has recorded its id: the marker and the token's user (GET /user, asked once
// per connector, as the replier asks) make it the gateway's own. A stranger copying the
// marker, and the token's user writing without one, are heard.
func TestMarkedReplyOfTheTokensUserIgnoredBeforeRecorded(t *testing.T) {
	f := newFakeGitHub(t)
	f.login = "signalgate-bot" // the token's user
	cfg := replyConfig(f)
	cfg.BotLogin = ""
	own := &fakeOwn{ids: map[string]bool{}} // the outbox has recorded nothing yet
	h, handler := ownHarnessWith(t, cfg, own, slog.New(slog.DiscardHandler))
	proxy := newRaceProxy(t, f, h)
	viaProxy := cfg
	viaProxy.APIURL = proxy.srv.URL + "/"
	r := newTestReplier(t, viaProxy)
	ctx := context.Background()

	_, _, err := r.Send(ctx, issueReply("r-1", "Fixed in #8."))
	require.NoError(t, err)
	recs := proxy.delivered()
	require.Len(t, recs, 1, "delivered while the replier waited for GitHub's answer")
	ev := requireOwn(t, h, recs[0], "the reply's comment")
	_, err = handler.Items(ctx, &ev)
	var nm *connectors.NotMapped
	require.ErrorAs(t, err, &nm, "replay judges it the same")
	assert.Equal(t, reply.OwnReason, nm.Reason)
	posted := last(f.issueComments("octo-org/hello#7"))

	root := f.addReviewComment("octo-org/hello#7", "alice", "Why a map here?", time.Now())
	rp := issueReply("r-2", "Lookups by id.")
	editPlace(&rp.To, func(p *Place) { p.ReviewCommentID = root })
	_, _, err = r.Send(ctx, rp)
	require.NoError(t, err)
	recs = proxy.delivered()
	require.Len(t, recs, 2)
	requireOwn(t, h, recs[1], "the reply in the review thread")
	inThread := last(f.reviewComments("octo-org/hello#7"))
	assert.Equal(t, strconv.FormatInt(root, 10), fmt.Sprint(inThread["in_reply_to_id"]), "a reply in the thread")

	requireHeard(t, h, h.deliver("issue_comment", "d-3", commentEvent(t, "issue_comment", copyOf(posted, "mallory", 9001), nil)),
		"a stranger's comment with the reply's marker copied")
	requireHeard(t, h, h.deliver("pull_request_review_comment", "d-4",
		commentEvent(t, "pull_request_review_comment", copyOf(inThread, "mallory", 9002), nil)), "the same in a review thread")
	mine := map[string]any{"id": json.Number("9003"), "body": "written by hand", "user": map[string]any{"login": "signalgate-bot"}}
	requireHeard(t, h, h.deliver("issue_comment", "d-5", commentEvent(t, "issue_comment", mine, nil)),
		"the token's user writing without a marker")

	assert.Equal(t, 1, countRequests(f, "GET /user"), "the account is asked once per connector")
}

// When the account cannot be learned, a marked comment is judged as before, by its
// recorded id: the delivery never fails, the failure is logged (without the token),
// and the next marked comment asks again.
func TestMarkedReplyAccountLookupFailureFallsBack(t *testing.T) {
	f := newFakeGitHub(t)
	f.login = "signalgate-bot"
	cfg := replyConfig(f)
	cfg.BotLogin = ""
	own := &fakeOwn{ids: map[string]bool{}}
	var logs bytes.Buffer
	h, _ := ownHarnessWith(t, cfg, own, slog.New(slog.NewTextHandler(&logs, nil)))
	r := newTestReplier(t, cfg)
	ctx := context.Background()

	_, _, err := r.Send(ctx, issueReply("r-1", "x"))
	require.NoError(t, err)
	posted := last(f.issueComments("octo-org/hello#7"))
	f.failNext(canned{status: http.StatusUnauthorized, body: `{"message":"Bad credentials"}`})
	requireHeard(t, h, h.deliver("issue_comment", "d-1", commentEvent(t, "issue_comment", posted, nil)),
		"not recorded and the account unknown: today's behaviour")
	assert.Contains(t, logs.String(), "own reply account unknown")
	assert.Contains(t, logs.String(), "GET /user")
	assert.NotContains(t, logs.String(), "ghp_test-token")

	// A recorded id needs no account.
	own.mu.Lock()
	own.ids[posted["id"].(json.Number).String()] = true
	own.mu.Unlock()
	requireOwn(t, h, h.deliver("issue_comment", "d-2", commentEvent(t, "issue_comment", posted, nil)), "recorded")
	assert.Equal(t, 1, countRequests(f, "GET /user"), "only the failed lookup so far")

	_, _, err = r.Send(ctx, issueReply("r-2", "y"))
	require.NoError(t, err)
	requireOwn(t, h, h.deliver("issue_comment", "d-3", commentEvent(t, "issue_comment", last(f.issueComments("octo-org/hello#7")), nil)),
		"the account learned on the next marked comment")
	assert.Equal(t, 2, countRequests(f, "GET /user"))
}

// A GitHub App's replies are its bot's, "<slug>[bot]": known from the payload's
// performed_via_github_app, else from GET /app as the replier learns it. A person acting
// through the App (a user-to-server token) with a copied marker is heard.
func TestMarkedReplyOfTheAppsBotIgnoredBeforeRecorded(t *testing.T) {
	f := newFakeGitHub(t)
	key, pemKey := testAppKey(t)
	f.appID, f.appKey, f.auth, f.appSlug, f.login = 4242, &key.PublicKey, "", "signalgate-app", "signalgate-app[bot]"
	cfg := testConfig()
	cfg.BotLogin = ""
	cfg.APIURL = f.URL()
	cfg.App = &AppConfig{ID: 4242, PrivateKey: secretOf(pemKey), InstallationID: 99}
	require.NoError(t, cfg.Validate())
	h, _ := ownHarnessWith(t, cfg, &fakeOwn{ids: map[string]bool{}}, slog.New(slog.DiscardHandler))
	r := newTestReplier(t, cfg)

	_, _, err := r.Send(context.Background(), issueReply("r-1", "as the app"))
	require.NoError(t, err)
	posted := last(f.issueComments("octo-org/hello#7"))
	thisApp := map[string]any{"id": 4242, "slug": "signalgate-app"}
	requireOwn(t, h, h.deliver("issue_comment", "d-1", commentEvent(t, "issue_comment", posted, thisApp)), "through this App")
	assert.Zero(t, countRequests(f, "GET /app"), "the payload named the App's bot")
	requireOwn(t, h, h.deliver("issue_comment", "d-2", commentEvent(t, "issue_comment", posted, nil)), "the App's bot by GET /app")
	assert.Equal(t, 1, countRequests(f, "GET /app"))

	requireHeard(t, h, h.deliver("issue_comment", "d-3", commentEvent(t, "issue_comment", copyOf(posted, "mallory", 9001), thisApp)),
		"a person through this App with a copied marker")
	requireHeard(t, h, h.deliver("issue_comment", "d-4", commentEvent(t, "issue_comment", copyOf(posted, "mallory", 9002), nil)),
		"a stranger with a copied marker")
}

// With bot_login set, the bot's marked comment is the gateway's own without asking
// GitHub who the token is; a stranger's copy is heard.
func TestMarkedReplyWithBotLoginIgnoredBeforeRecorded(t *testing.T) {
	f := newFakeGitHub(t)
	f.login = "signalgate-bot"
	cfg := replyConfig(f)
	cfg.BotLogin = "signalgate-bot"
	h, _ := ownHarnessWith(t, cfg, &fakeOwn{ids: map[string]bool{}}, slog.New(slog.DiscardHandler))
	_, _, err := newTestReplier(t, cfg).Send(context.Background(), issueReply("r-1", "x"))
	require.NoError(t, err)
	posted := last(f.issueComments("octo-org/hello#7"))
	requireOwn(t, h, h.deliver("issue_comment", "d-1", commentEvent(t, "issue_comment", posted, nil)), "the bot's reply")
	requireHeard(t, h, h.deliver("issue_comment", "d-2", commentEvent(t, "issue_comment", copyOf(posted, "mallory", 9001), nil)),
		"a stranger with a copied marker")
	assert.Zero(t, countRequests(f, "GET /user"))
}
