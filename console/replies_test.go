package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

var repliesThread = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}

func adminReplyOf(id string, st reply.Status, text string, to reply.To) admin.AdminReply {
	return admin.AdminReply{Reply: reply.Reply{ID: id, Thread: repliesThread, Text: text, To: to, Status: st,
		CreatedAt: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}, ThreadKey: repliesThread}
}

// The thread page lists the thread's replies (whatever the records' filter), where each
// goes, the platform's link once sent and the reason once failed; only a failed one has
// a retry button, and only for a session that may write.
func TestThreadPageShowsReplies(t *testing.T) {
	f := newFixture(t, testTokens)
	slackTo := reply.NewTo("slack", "ops", slack.Place{Team: "T1", Channel: "C0123", ThreadTS: "1700000000.000100"})
	sent := adminReplyOf("ans-1", reply.StatusSent, "Fixed in #8, **deployed**", slackTo)
	sent.PlatformID, sent.URL = "C0123/1700000001.000200", "https://acme.slack.com/archives/C0123/p1700000001000200"
	failed := adminReplyOf("ans-2", reply.StatusFailed, "Second answer", reply.NewTo("github", "gh", github.Place{Repo: "acme/api", Number: 7}))
	failed.Attempts, failed.LastError = 1, "github: 404 Not Found"
	queued := adminReplyOf("ans-3", reply.StatusQueued, strings.Repeat("long ", 200), slackTo)
	f.admin.replies = []admin.AdminReply{sent, failed, queued}
	f.admin.records = []inbox.Record{{ID: "r1", Thread: repliesThread, Source: "slack", Kind: "dm", Status: inbox.StatusDelivered,
		Metadata: map[string]any{"replyTo": map[string]any{"source": "slack", "connector": "ops", "team": "T1", "channel": "D042", "threadTs": "1700000000.000100"}}}}

	ops := f.signIn(opsToken)
	path := threadURL(repliesThread) + "&status=delivered"
	page := f.do(http.MethodGet, path, nil, ops, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `reply goes to: slack ops D042/1700000000.000100`, "a record says where its answer goes")
	require.Contains(t, page.body, `reply goes to: slack ops C0123/1700000000.000100`)
	require.Contains(t, page.body, `reply goes to: github gh acme/api#7`)
	require.Contains(t, page.body, `<a class="platform" href="https://acme.slack.com/archives/C0123/p1700000001000200" rel="noreferrer">C0123/1700000001.000200</a>`)
	require.Contains(t, page.body, `<small class="error">github: 404 Not Found</small>`)
	require.Contains(t, page.body, `data-id="ans-3" data-status="queued"`)
	require.NotContains(t, page.body, strings.Repeat("long ", 100), "a long text is cut")
	require.Equal(t, 1, strings.Count(page.body, `class="retry"`), "only the failed reply can be retried")
	require.Contains(t, page.body, `action="/console/replies/ans-2/retry"`)
	q := f.admin.repliesQ[len(f.admin.repliesQ)-1]
	require.Equal(t, url.Values{"agent": {"coder"}, "resource": {"acme/api"}, "thread": {"acme/api#7"}, "limit": {itoa(repliesShown)}}, q,
		"the thread's replies, not the records' status filter")

	r := f.do(http.MethodPost, "/console/replies/ans-2/retry", url.Values{"csrf": {f.csrf(ops)}, "back": {threadURL(repliesThread)}}, ops, nil)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, threadURL(repliesThread), r.header.Get("Location"))
	require.Equal(t, []string{"retry reply ans-2"}, f.admin.done())
	r = f.do(http.MethodPost, "/console/replies/"+url.PathEscape("bad id!")+"/retry", url.Values{"csrf": {f.csrf(ops)}}, ops, nil)
	require.Equal(t, http.StatusBadRequest, r.status)

	// A read-only session sees the replies and no retry; its post is refused.
	viewer := f.signIn(viewerToken)
	page = f.do(http.MethodGet, path, nil, viewer, nil)
	require.Contains(t, page.body, `data-id="ans-2" data-status="failed"`)
	require.NotContains(t, page.body, `class="retry"`)
	r = f.do(http.MethodPost, "/console/replies/ans-2/retry", url.Values{"csrf": {f.csrf(viewer)}}, viewer, nil)
	require.Equal(t, http.StatusForbidden, r.status)
	require.Len(t, f.admin.done(), 1)
}

// A reply's text is the agent's, its error the platform's and a record's replyTo the
// sender's: all render as text, and a link that is not a web address is no link.
func TestThreadPageEscapesReplies(t *testing.T) {
	f := newFixture(t, testTokens)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	to := reply.NewTo("slack", evil, slack.Place{Channel: evil, ThreadTS: evil})
	r := adminReplyOf("ans-1", reply.StatusFailed, evil, to)
	r.LastError, r.PlatformID, r.URL = evil, evil, "javascript:alert(3)"
	f.admin.replies = []admin.AdminReply{r}
	f.admin.records = []inbox.Record{{ID: "r1", Thread: repliesThread, Source: "slack", Kind: "dm", Status: inbox.StatusDelivered,
		Metadata: map[string]any{"replyTo": map[string]any{"source": "github", "connector": evil, "repo": evil, "number": 7}}}}
	page := f.do(http.MethodGet, threadURL(repliesThread), nil, f.signIn(opsToken), nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.NotContains(t, page.body, "<script>alert")
	require.NotContains(t, page.body, "<img src=x")
	require.NotContains(t, page.body, "javascript:alert")
	require.GreaterOrEqual(t, strings.Count(page.body, "&lt;script&gt;alert(1)&lt;/script&gt;"), 6)
}
