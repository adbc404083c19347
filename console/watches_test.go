package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/watch"
)

func adminWatchOf(id, source, conn, resource string) admin.AdminWatch {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	return admin.AdminWatch{Watch: watch.Watch{ID: id, Thread: repliesThread, Source: source, Connector: conn, Resource: resource,
		CreatedAt: at, ExpiresAt: at.Add(watch.DefaultTTL)}, ThreadKey: repliesThread}
}

// The thread page lists the thread's live watches (what, which kinds, until when, the
// reply that made one) with a delete button for a session that may write, and the
// recently ended ones with their reason.
func TestThreadPageShowsWatches(t *testing.T) {
	f := newFixture(t, testTokens)
	pr := adminWatchOf("w-pr", "github", "gh", "acme/api#7")
	pr.Kinds, pr.Priority, pr.Forever = []string{"pr-*", "issue-comment"}, inbox.PriorityHigh, true
	slack := adminWatchOf("w-slack", "slack", "ops", "C0123/1712345678.000100")
	slack.ReplyID = "ans-1"
	merged := adminWatchOf("w-old", "github", "gh", "acme/api#6")
	ended := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	merged.EndedAt, merged.EndReason = &ended, watch.EndMerged
	f.admin.watches = []admin.AdminWatch{pr, slack, merged}

	ops := f.signIn(opsToken)
	page := f.do(http.MethodGet, threadURL(repliesThread)+"&status=delivered", nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `github · gh · acme/api#7</span> <span class="prio p-high">high</span>`)
	require.Contains(t, page.body, `kinds: pr-*, issue-comment · past merge or close`)
	require.Contains(t, page.body, `slack · ops · C0123/1712345678.000100`)
	require.Contains(t, page.body, `kinds: all`)
	require.Contains(t, page.body, `created from reply <code>ans-1</code>`)
	require.Contains(t, page.body, `<time datetime="2026-12-01T09:00:00Z">`, "the expiry")
	require.Equal(t, 2, strings.Count(page.body, `class="unwatch"`), "each live watch can be deleted")
	require.Contains(t, page.body, `action="/console/watches/w-slack/delete"`)
	require.Contains(t, page.body, `data-id="w-old" data-reason="merged"`)
	require.Contains(t, page.body, `<small class="reason">merged</small>`)
	require.NotContains(t, page.body, `action="/console/watches/w-old/delete"`, "an ended watch has nothing to delete")
	q := f.admin.watchesQ[len(f.admin.watchesQ)-2:]
	thread := url.Values{"agent": {"coder"}, "resourceId": {"acme/api"}, "threadId": {"acme/api#7"}}
	require.Equal(t, withAll(thread, "status", "live", "limit", itoa(liveWatchesShown)), q[0], "the thread's watches, not the records' filter")
	require.Equal(t, withAll(thread, "status", "ended", "limit", itoa(endedWatchesShown)), q[1])

	r := f.do(http.MethodPost, "/console/watches/w-slack/delete", url.Values{"csrf": {f.csrf(ops)}, "back": {threadURL(repliesThread)}}, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, threadURL(repliesThread), r.header.Get("Location"))
	require.Equal(t, []string{"end watch w-slack by ops"}, f.admin.done())

	// Without the session's CSRF token, or from another site, nothing is ended.
	for name, try := range map[string]func() resp{
		"no token": func() resp { return f.do(http.MethodPost, "/console/watches/w-pr/delete", url.Values{}, ops, nil) },
		"wrong token": func() resp {
			return f.do(http.MethodPost, "/console/watches/w-pr/delete", url.Values{"csrf": {"x" + f.csrf(ops)}}, ops, nil)
		},
		"cross-site": func() resp {
			return f.do(http.MethodPost, "/console/watches/w-pr/delete", url.Values{"csrf": {f.csrf(ops)}}, ops,
				map[string]string{"Sec-Fetch-Site": "cross-site"})
		},
	} {
		require.Equal(t, http.StatusForbidden, try().status, name)
	}
	require.Len(t, f.admin.done(), 1)

	// The admin API's answer shows: an unknown watch is a 404 page.
	f.admin.endErr = server.NotFound("watch %q not found", "w-gone")
	r = f.do(http.MethodPost, "/console/watches/w-gone/delete", url.Values{"csrf": {f.csrf(ops)}}, ops, nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Contains(t, r.body, "not found")

	// A read-only session sees the watches and no delete; its post is refused.
	viewer := f.signIn(viewerToken)
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, viewer, nil)
	require.Contains(t, page.body, `data-id="w-pr"`)
	require.NotContains(t, page.body, `class="unwatch"`)
	r = f.do(http.MethodPost, "/console/watches/w-pr/delete", url.Values{"csrf": {f.csrf(viewer)}}, viewer, nil)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "read-only")
	require.Len(t, f.admin.done(), 1)

	// No watches: the page says how one comes about.
	f.admin.watches = nil
	page = f.do(http.MethodGet, threadURL(repliesThread), nil, ops, nil)
	require.Contains(t, page.body, `id="no-watches"`)
	require.NotContains(t, page.body, `id="ended-watches"`)
}

func withAll(base url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// A watch's resource, kinds and reply id come from the agent: they render as text.
func TestThreadPageEscapesWatches(t *testing.T) {
	f := newFixture(t, testTokens)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	w := adminWatchOf("w-1", "generic", "billing", evil)
	w.Kinds, w.ReplyID = []string{evil}, evil
	old := adminWatchOf("w-2", "generic", "billing", evil)
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	old.EndedAt, old.EndReason = &at, evil
	f.admin.watches = []admin.AdminWatch{w, old}
	page := f.do(http.MethodGet, threadURL(repliesThread), nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.NotContains(t, page.body, "<script>alert")
	require.NotContains(t, page.body, "<img src=x")
	require.GreaterOrEqual(t, strings.Count(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;"), 5)
}
