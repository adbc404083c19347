package github

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

// Watches are created at 10:00 on the harness's day; deliveries arrive at 12:00
// (fixedNow); the examples' own times are set to 11:00 unless a test says otherwise.
var (
	watchCreated = fixedNow().Add(-2 * time.Hour)
	happened     = fixedNow().Add(-time.Hour).Format(time.RFC3339)
)

const watchedRepo = "codertocat/hello-world" // the examples' repository, as watches name it

type watchHarness struct {
	*harness
	watches *watchtest.Memory
	seen    *fakeSeenRepos
}

func newWatchHarness(t *testing.T, routes []connectors.RouteConfig, mutate func(*Config)) *watchHarness {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(routes, []string{"coder", "reviewer"},
		connectors.WithWatchResources(watch.Resources{{Source: Source, Parse: WatchResource}}))
	require.NoError(t, err)
	mem, fake, seen := watchtest.NewMemory(), connectorstest.NewIngester(), &fakeSeenRepos{}
	cfg := testConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	handler, err := NewHandler([]Config{cfg}, connectors.NewPipeline(router, fake, log, connectors.WithWatches(mem)), log, fixedNow,
		WithSeenRepos(seen))
	require.NoError(t, err)
	handler.Mount(srv.Echo())
	return &watchHarness{harness: &harness{t: t, e: srv.Echo(), ing: fake, fake: fake}, watches: mem, seen: seen}
}

// watch creates a live watch of thread on resource (options change it first).
func (h *watchHarness) watch(thread, resource string, opts ...func(*watch.Watch)) watch.Watch {
	h.t.Helper()
	w := watch.Watch{ID: "w-" + thread + "-" + resource, Thread: inbox.ThreadKey{Agent: "coder", Resource: "gh", Thread: thread},
		Source: "github", Connector: "acme", Resource: resource, CreatedAt: watchCreated, ExpiresAt: watchCreated.Add(7 * 24 * time.Hour)}
	for _, o := range opts {
		o(&w)
	}
	_, created, err := h.watches.CreateWatch(context.Background(), w, 100)
	require.NoError(h.t, err)
	require.True(h.t, created)
	return w
}

// send delivers an event and answers what was ingested.
func (h *watchHarness) send(event, delivery string, body map[string]any) connectorstest.Ingested {
	h.t.Helper()
	rec := h.deliver(event, delivery, encode(h.t, body))
	require.Less(h.t, rec.Code, 300, rec.Body.String())
	call, ok := h.fake.Last()
	require.True(h.t, ok)
	return call
}

func comment(t *testing.T, number int, association string) map[string]any {
	ic := pick(t, examples(t, "api.github.com"), "issue_comment", "created", nil)
	set(ic, "issue.number", json.Number(strconv.Itoa(number)))
	set(ic, "comment.created_at", happened)
	set(ic, "comment.author_association", association)
	return ic
}

func threads(ns []inbox.Notification) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Thread.Thread+" "+n.Route)
	}
	return out
}

// A watched pull request hears a comment though no route matches GitHub: one record of
// route watch for the watching thread, carrying the watch's id and priority.
func TestWatchedPullRequestHearsACommentWithoutARoute(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	w := h.watch("pr-1", watchedRepo+"#1", func(w *watch.Watch) { w.Priority = inbox.PriorityUrgent })
	h.watch("pr-2", watchedRepo+"#2")

	call := h.send("issue_comment", "d-1", comment(t, 1, "OWNER"))
	require.Len(t, call.Notifications, 1, threads(call.Notifications))
	n := call.Notifications[0]
	assert.Equal(t, w.Thread, n.Thread)
	assert.Equal(t, watch.Route, n.Route)
	assert.Equal(t, inbox.PriorityUrgent, n.Priority)
	id, _ := n.Attributes.Get("watch")
	assert.Equal(t, w.ID, id)
	assert.Equal(t, w.ID, n.Metadata["watch"])
	assert.Equal(t, inbox.EventRouted, call.Event.Status)
}

// With a route feeding the watching thread too, the thread gets one record (the route's).
func TestWatchAndRouteMakeOneRecord(t *testing.T) {
	h := newWatchHarness(t, allGitHubRoute(), nil)
	h.watch("Codertocat/Hello-World#1", watchedRepo+"#1", func(w *watch.Watch) {
		w.Thread = inbox.ThreadKey{Agent: "coder", Resource: "Codertocat/Hello-World", Thread: "Codertocat/Hello-World#1"}
	})
	call := h.send("issue_comment", "d-1", comment(t, 1, "OWNER"))
	require.Len(t, call.Notifications, 1, threads(call.Notifications))
	assert.Equal(t, "all-github", call.Notifications[0].Route)
}

// The silent baseline: a comment made before the watch was created (a redelivered old
// event) is not delivered because of it; one made after is.
func TestWatchBaseline(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	h.watch("pr-1", watchedRepo+"#1")
	old := comment(t, 1, "OWNER")
	set(old, "comment.created_at", watchCreated.Add(-time.Minute).Format(time.RFC3339))
	call := h.send("issue_comment", "d-old", old)
	assert.Empty(t, call.Notifications)
	assert.Equal(t, inbox.EventUnrouted, call.Event.Status)

	call = h.send("issue_comment", "d-new", comment(t, 1, "OWNER"))
	assert.Len(t, call.Notifications, 1)
}

// A watch's kinds filter what it hears; an expired watch hears nothing.
func TestWatchKindsAndExpiry(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	h.watch("prs-only", watchedRepo+"#1", func(w *watch.Watch) { w.Kinds = []string{"pr-*"} })
	h.watch("expired", watchedRepo+"#1", func(w *watch.Watch) { w.ExpiresAt = fixedNow() })
	h.watch("comments", watchedRepo+"#1", func(w *watch.Watch) { w.Kinds = []string{KindComment} })
	call := h.send("issue_comment", "d-1", comment(t, 1, "OWNER"))
	assert.Equal(t, []string{"comments watch"}, threads(call.Notifications))
}

func mergedPR(t *testing.T, merged bool) map[string]any {
	pr := pick(t, examples(t, "api.github.com"), "pull_request", "closed", nil)
	set(pr, "pull_request.merged", merged)
	set(pr, "pull_request.closed_at", happened)
	if merged {
		set(pr, "pull_request.merged_at", happened)
	}
	return pr
}

// A merged pull request ends its non-forever watches (one watch-ended notification each,
// after the item's records); a forever watch and a whole-repository watch go on.
func TestMergedPullRequestEndsItsWatches(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	once := h.watch("once", watchedRepo+"#2")
	h.watch("forever", watchedRepo+"#2", func(w *watch.Watch) { w.Forever = true })
	h.watch("repo", watchedRepo)
	h.watch("other", watchedRepo+"#3")

	call := h.send("pull_request", "d-1", mergedPR(t, true))
	require.Len(t, call.Notifications, 4, threads(call.Notifications))
	assert.ElementsMatch(t, []string{"once watch", "forever watch", "repo watch"}, threads(call.Notifications[:3]))
	end := call.Notifications[3]
	assert.Equal(t, once.Thread, end.Thread)
	require.NotNil(t, end.EndsWatch)
	assert.Equal(t, inbox.WatchEnd{ID: once.ID, Reason: watch.EndMerged}, *end.EndsWatch)
	assert.Equal(t, watch.Kind, end.Kind)
	for _, n := range call.Notifications[:3] {
		assert.Nil(t, n.EndsWatch)
		assert.Equal(t, KindPRMerged, n.Kind)
	}
	// The store ends it with the event: a redelivery hears nothing of it.
	require.True(t, h.watches.End(*end.EndsWatch, fixedNow()))
	call = h.send("pull_request", "d-2", mergedPR(t, true))
	assert.ElementsMatch(t, []string{"forever watch", "repo watch"}, threads(call.Notifications))
}

// Closed without merging, and an issue closed: the reason is closed.
func TestClosedEndsWatches(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	h.watch("pr", watchedRepo+"#2", func(w *watch.Watch) { w.Kinds = []string{KindComment} })
	call := h.send("pull_request", "d-1", mergedPR(t, false))
	require.Len(t, call.Notifications, 1, "the kinds leave the item out; the end still comes")
	assert.Equal(t, watch.EndClosed, call.Notifications[0].EndsWatch.Reason)

	is := pick(t, examples(t, "api.github.com"), "issues", "opened", nil)
	set(is, "action", "closed")
	set(is, "issue.state", "closed")
	set(is, "issue.closed_at", happened)
	num := int(mustInt(t, get(is, "issue.number")))
	h.watch("issue", watchedRepo+"#"+strconv.Itoa(num))
	call = h.send("issues", "d-2", is)
	require.Len(t, call.Notifications, 2, threads(call.Notifications))
	assert.Equal(t, watch.EndClosed, call.Notifications[1].EndsWatch.Reason)
}

func mustInt(t *testing.T, v any) int64 {
	n, err := v.(json.Number).Int64()
	require.NoError(t, err)
	return n
}

// A whole-repository watch hears a push (no number) and a comment on any issue.
func TestWholeRepositoryWatch(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	h.watch("repo", watchedRepo)
	push := pick(t, examples(t, "api.github.com"), "push", "", nil)
	set(push, "ref", "refs/heads/main")
	set(push, "repository.default_branch", "main")
	set(push, "head_commit.timestamp", happened)
	call := h.send("push", "d-1", push)
	assert.Equal(t, []string{"repo watch"}, threads(call.Notifications))
	call = h.send("issue_comment", "d-2", comment(t, 1, "OWNER"))
	assert.Equal(t, []string{"repo watch"}, threads(call.Notifications))
}

// The author gate: a comment or review by an author outside authorized_associations is
// stored ignored "author not authorized", for routes and watches alike; a member's
// passes; [ANY] lets everyone through.
func TestAuthorGate(t *testing.T) {
	ex := examples(t, "api.github.com")
	review := func(assoc string) map[string]any {
		r := pick(t, ex, "pull_request_review", "submitted", nil)
		set(r, "review.author_association", assoc)
		set(r, "review.submitted_at", happened)
		return r
	}
	reviewComment := func(assoc string) map[string]any {
		r := pick(t, ex, "pull_request_review_comment", "created", nil)
		set(r, "comment.author_association", assoc)
		set(r, "comment.created_at", happened)
		return r
	}
	h := newWatchHarness(t, allGitHubRoute(), nil)
	h.watch("repo", watchedRepo)
	for i, tc := range []struct {
		event string
		body  map[string]any
	}{
		{"issue_comment", comment(t, 1, "NONE")},
		{"issue_comment", comment(t, 1, "CONTRIBUTOR")},
		{"issue_comment", comment(t, 1, "FIRST_TIME_CONTRIBUTOR")},
		{"pull_request_review", review("NONE")},
		{"pull_request_review_comment", reviewComment("CONTRIBUTOR")},
	} {
		rec := h.deliver(tc.event, "d-refused-"+strconv.Itoa(i), encode(t, tc.body))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		call, _ := h.fake.Last()
		assert.Empty(t, call.Notifications, tc.event)
		assert.Equal(t, inbox.EventIgnored, call.Event.Status, tc.event)
		assert.Equal(t, SkipUnauthorized, call.Event.Error, tc.event)
	}
	for i, tc := range []struct {
		event string
		body  map[string]any
	}{
		{"issue_comment", comment(t, 1, "MEMBER")},
		{"pull_request_review", review("COLLABORATOR")},
		{"pull_request_review_comment", reviewComment("OWNER")},
	} {
		call := h.send(tc.event, "d-member-"+strconv.Itoa(i), tc.body)
		assert.Len(t, call.Notifications, 2, "the route's thread and the watch's: %v", threads(call.Notifications))
	}

	anyone := newWatchHarness(t, allGitHubRoute(), func(c *Config) { c.AuthorizedAssociations = []string{"any"} })
	call := anyone.send("issue_comment", "d-any", comment(t, 1, "NONE"))
	assert.Len(t, call.Notifications, 1)
	narrow := newWatchHarness(t, allGitHubRoute(), func(c *Config) { c.AuthorizedAssociations = []string{"OWNER"} })
	rec := narrow.deliver("issue_comment", "d-member", encode(t, comment(t, 1, "MEMBER")))
	assert.Equal(t, http.StatusAccepted, rec.Code)
}

func TestAuthorizedAssociationsValidation(t *testing.T) {
	for _, tc := range []struct {
		list []string
		want string
	}{
		{[]string{"OWNER", "STRANGER"}, `authorized_associations[1]: unknown "STRANGER"`},
		{[]string{"ANY", "OWNER"}, "authorized_associations[0]: ANY stands alone"},
	} {
		cfg := testConfig()
		cfg.AuthorizedAssociations = tc.list
		_, err := NewHandler([]Config{cfg}, nil, nil, fixedNow)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "github[0]."+tc.want)
	}
	cfg := testConfig()
	cfg.AuthorizedAssociations = []string{"member", "Owner"}
	require.NoError(t, cfg.Validate())
	assert.Equal(t, DefaultAuthorizedAssociations(), testConfig().WithDefaults().AuthorizedAssociations)
}

// Items carry the provider's time of what happened, from the payload object's own time.
func TestItemsOccurredAt(t *testing.T) {
	ex := examples(t, "api.github.com")
	h := newWatchHarness(t, allGitHubRoute(), nil)
	at := func(event string, body map[string]any) time.Time {
		t.Helper()
		items, err := h.handlerItems(event, body)
		require.NoError(t, err)
		require.Len(t, items, 1, event)
		return items[0].OccurredAt
	}
	ts := func(v any) time.Time {
		tm, err := time.Parse(time.RFC3339, v.(string))
		require.NoError(t, err)
		return tm.UTC()
	}
	ic := pick(t, ex, "issue_comment", "created", nil)
	assert.Equal(t, ts(get(ic, "comment.created_at")), at("issue_comment", ic))
	ed := pick(t, ex, "issue_comment", "edited", nil)
	set(ed, "comment.updated_at", "2026-02-01T10:00:00Z")
	assert.Equal(t, ts("2026-02-01T10:00:00Z"), at("issue_comment", ed))
	rv := pick(t, ex, "pull_request_review", "submitted", nil)
	assert.Equal(t, ts(get(rv, "review.submitted_at")), at("pull_request_review", rv))
	pr := pick(t, ex, "pull_request", "closed", nil)
	assert.Equal(t, ts(get(pr, "pull_request.closed_at")), at("pull_request", pr))
	op := pick(t, ex, "pull_request", "opened", nil)
	assert.Equal(t, ts(get(op, "pull_request.updated_at")), at("pull_request", op))
	cr := pick(t, ex, "check_run", "completed", func(m map[string]any) bool { return get(m, "check_run.conclusion") == "failure" })
	assert.Equal(t, ts(get(cr, "check_run.completed_at")), at("check_run", cr))
	ps := pick(t, ex, "push", "", nil)
	set(ps, "ref", "refs/heads/main")
	set(ps, "repository.default_branch", "main")
	set(ps, "head_commit.timestamp", "2026-02-02T10:00:00Z")
	assert.Equal(t, ts("2026-02-02T10:00:00Z"), at("push", ps))
}

func (h *watchHarness) handlerItems(event string, body map[string]any) ([]connectors.Item, error) {
	cfg := testConfig()
	handler, err := NewHandler([]Config{cfg}, nil, nil, fixedNow)
	if err != nil {
		return nil, err
	}
	return handler.Items(context.Background(), &inbox.Event{Source: Source, Connector: cfg.Name, Type: event, Body: encode(h.t, body)})
}

// fakeSeenRepos records the repositories written; Err fails every write.
type fakeSeenRepos struct {
	mu     sync.Mutex
	writes []string
	Err    error
}

func (f *fakeSeenRepos) SeenRepo(_ context.Context, connector, repo string, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, connector+" "+repo)
	return f.Err
}

func (f *fakeSeenRepos) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.writes...)
}

// Every verified delivery's repository is recorded, ping included, once per process; a
// forged delivery's is not; a failing write never fails the delivery.
func TestSeenRepositories(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	ex := examples(t, "api.github.com")
	ping := pick(t, ex, "ping", "", nil)
	require.Equal(t, http.StatusOK, h.deliver("ping", "d-ping", encode(t, ping)).Code)
	h.send("issue_comment", "d-1", comment(t, 1, "OWNER"))
	h.send("issue_comment", "d-2", comment(t, 1, "OWNER"))
	forged := newDelivery("acme", "issue_comment", "d-forged", []byte(`{"repository":{"full_name":"evil/repo"}}`))
	forged.Header.Set("X-Hub-Signature-256", sign("wrong", []byte("x")))
	require.Equal(t, http.StatusUnauthorized, h.do(forged).Code)
	assert.Equal(t, []string{"acme octocoders/hello-world", "acme codertocat/hello-world"}, h.seen.all())

	failing := newWatchHarness(t, nil, nil)
	failing.seen.Err = errors.New("database down")
	rec := failing.deliver("issue_comment", "d-1", encode(t, comment(t, 1, "OWNER")))
	assert.Equal(t, http.StatusAccepted, rec.Code, "stored (no route): the write's failure is only logged")
	failing.deliver("issue_comment", "d-2", encode(t, comment(t, 1, "OWNER")))
	assert.Len(t, failing.seen.all(), 2, "not remembered as written: tried again")
}

// GitHub's times have whole seconds: a comment posted in the second a watch was created,
// after it, carries that second and is heard; one a second earlier is not.
func TestWatchBaselineWithinTheSecond(t *testing.T) {
	h := newWatchHarness(t, nil, nil)
	h.watch("pr-1", watchedRepo+"#1", func(w *watch.Watch) { w.CreatedAt = watchCreated.Add(700 * time.Millisecond) })
	earlier := comment(t, 1, "OWNER")
	set(earlier, "comment.created_at", watchCreated.Add(-time.Second).Format(time.RFC3339))
	assert.Empty(t, h.send("issue_comment", "d-earlier", earlier).Notifications)
	same := comment(t, 1, "OWNER")
	set(same, "comment.created_at", watchCreated.Format(time.RFC3339))
	set(same, "comment.id", 4242)
	assert.Len(t, h.send("issue_comment", "d-same-second", same).Notifications, 1)
}
