package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

type adminReplyPage struct {
	Replies []struct {
		ID         string       `json:"id"`
		Status     reply.Status `json:"status"`
		Agent      string       `json:"agent"`
		ResourceID string       `json:"resourceId"`
		ThreadID   string       `json:"threadId"`
		LastError  string       `json:"lastError"`
		ReplyTo    reply.To     `json:"replyTo"`
	} `json:"replies"`
	NextCursor string `json:"nextCursor"`
}

func (p adminReplyPage) ids() []string {
	out := make([]string, len(p.Replies))
	for i, r := range p.Replies {
		out[i] = r.ID
	}
	return out
}

// withReplies stores five replies in several states and serves the outbox; it returns
// the ids oldest first.
func (en *env) withReplies(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	coder := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	support := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	dm := reply.NewTo("slack", "acme", slack.Place{Channel: "D1"})
	issue := reply.NewTo("github", "gh", github.Place{Repo: "acme/api", Number: 7})
	rows := []struct {
		id     string
		k      inbox.ThreadKey
		to     reply.To
		status reply.Status
	}{
		{"r1", coder, issue, reply.StatusSent},
		{"r2", coder, issue, reply.StatusFailed},
		{"r3", support, dm, reply.StatusQueued},
		{"r4", support, dm, reply.StatusPending},
		{"r5", support, dm, reply.StatusFailed},
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		at := t0.Add(time.Duration(i) * time.Second)
		_, created, err := store.NewReplies(en.st).CreateReply(ctx, reply.Reply{ID: r.id, Thread: r.k, Text: "answer " + r.id, To: r.to,
			Status: r.status, LastError: "", CreatedAt: at, UpdatedAt: at, QueuedAt: at})
		require.NoError(t, err)
		require.True(t, created)
		ids[i] = r.id
	}
	svc := reply.New(store.NewReplies(en.st), map[string]reply.Sender{}, service.Base{Now: en.clock.Now}, reply.WithPlaces(kindstest.Places()))
	d := en.deps
	d.Replies = svc
	en.api = en.newAPI(d)
	return ids
}

func TestListReplies(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		en.withReplies(t)
		var page adminReplyPage
		en.call(http.MethodGet, "/admin/v1/replies?limit=2", nil, &page)
		require.Equal(t, []string{"r5", "r4"}, page.ids(), "newest first")
		require.Equal(t, "support", page.Replies[0].Agent, "each reply names its thread")
		require.Equal(t, "slack:T1", page.Replies[0].ResourceID)
		require.Equal(t, "dm:U1", page.Replies[0].ThreadID)
		require.Equal(t, reply.NewTo("slack", "acme", slack.Place{Channel: "D1"}), page.Replies[0].ReplyTo)
		seen := page.ids()
		for page.NextCursor != "" {
			next := page.NextCursor
			page = adminReplyPage{}
			en.call(http.MethodGet, "/admin/v1/replies?limit=2&cursor="+url.QueryEscape(next), nil, &page)
			seen = append(seen, page.ids()...)
		}
		require.Equal(t, []string{"r5", "r4", "r3", "r2", "r1"}, seen, "the cursor walks every reply once")

		for query, want := range map[string][]string{
			"status=failed":                           {"r5", "r2"},
			"status=queued,pending":                   {"r4", "r3"},
			"agent=coder":                             {"r2", "r1"},
			"resource=slack%3AT1&thread=dm%3AU1":      {"r5", "r4", "r3"},
			"source=github":                           {"r2", "r1"},
			"connector=acme&status=failed":            {"r5"},
			"agent=coder&status=declined":             {},
			"thread=" + url.QueryEscape("acme/api#7"): {"r2", "r1"},
		} {
			page = adminReplyPage{}
			en.call(http.MethodGet, "/admin/v1/replies?"+query, nil, &page)
			require.Equal(t, want, page.ids(), query)
		}

		for query, param := range map[string]string{"status=maybe": "status", "limit=0": "limit", "cursor=garbage!": "cursor"} {
			code, raw := en.do(http.MethodGet, "/admin/v1/replies?"+query, opsToken, nil)
			require.Equal(t, http.StatusBadRequest, code, query)
			_, msg := errorOf(t, raw)
			require.Contains(t, msg, param, query)
		}

		var one struct {
			ID     string       `json:"id"`
			Status reply.Status `json:"status"`
			Agent  string       `json:"agent"`
			Text   string       `json:"text"`
		}
		en.call(http.MethodGet, "/admin/v1/replies/r2", nil, &one)
		require.Equal(t, "r2", one.ID)
		require.Equal(t, "coder", one.Agent)
		require.Equal(t, "answer r2", one.Text)
		code, _ := en.do(http.MethodGet, "/admin/v1/replies/nope", opsToken, nil)
		require.Equal(t, http.StatusNotFound, code)
		code, raw := en.do(http.MethodGet, "/admin/v1/replies/a%20b", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code, "%s", raw)
		_, msg := errorOf(t, raw)
		require.Contains(t, msg, "is not a reply id")
	})
}

// TestRetryReply: only a failed reply is queued again, by a token with the write scope.
func TestRetryReply(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		replies := store.NewReplies(en.st)
		en.withReplies(t)
		en.clock.Advance(time.Hour)

		code, raw := en.do(http.MethodPost, "/admin/v1/replies/r2/retry", viewerToken, nil)
		require.Equal(t, http.StatusForbidden, code, "%s", raw)
		code, _ = en.do(http.MethodPost, "/admin/v1/replies/r2/retry", "", nil)
		require.Equal(t, http.StatusUnauthorized, code)
		r, err := replies.GetReply(context.Background(), "r2")
		require.NoError(t, err)
		require.Equal(t, reply.StatusFailed, r.Status, "refused retries change nothing")

		var got struct {
			ID            string       `json:"id"`
			Status        reply.Status `json:"status"`
			Agent         string       `json:"agent"`
			NextAttemptAt *time.Time   `json:"nextAttemptAt"`
		}
		en.call(http.MethodPost, "/admin/v1/replies/r2/retry", nil, &got)
		require.Equal(t, reply.StatusQueued, got.Status)
		require.Equal(t, "coder", got.Agent)
		require.NotNil(t, got.NextAttemptAt)
		require.True(t, got.NextAttemptAt.Equal(t0.Add(time.Hour)), "due now: %s", got.NextAttemptAt)
		r, err = replies.GetReply(context.Background(), "r2")
		require.NoError(t, err)
		require.True(t, r.QueuedAt.Equal(t0.Add(time.Hour)), "replies.max_age counts afresh")

		for id, status := range map[string]string{"r2": "queued", "r1": "sent", "r3": "queued", "r4": "pending"} {
			code, raw := en.do(http.MethodPost, "/admin/v1/replies/"+id+"/retry", opsToken, nil)
			require.Equal(t, http.StatusConflict, code, id)
			c, msg := errorOf(t, raw)
			require.Equal(t, "conflict", c)
			require.Equal(t, "reply "+id+" is "+status+": only a failed reply can be retried", msg)
		}
		code, _ = en.do(http.MethodPost, "/admin/v1/replies/nope/retry", opsToken, nil)
		require.Equal(t, http.StatusNotFound, code)

		var page adminReplyPage
		en.do(http.MethodGet, "/admin/v1/replies", viewerToken, nil)
		code, raw = en.do(http.MethodGet, "/admin/v1/replies?status=failed", viewerToken, nil)
		require.Equal(t, http.StatusOK, code, "the read scope lists")
		require.NoError(t, json.Unmarshal(raw, &page))
		require.Equal(t, []string{"r5"}, page.ids())
	})
}

// TestRepliesWithoutOutbox: a gateway whose connectors send no replies lists none.
func TestRepliesWithoutOutbox(t *testing.T) {
	en := newEnv(t, envOpts{})
	var page adminReplyPage
	en.call(http.MethodGet, "/admin/v1/replies", nil, &page)
	require.Empty(t, page.Replies)
	for _, req := range []struct{ method, path string }{{http.MethodGet, "/admin/v1/replies/r1"}, {http.MethodPost, "/admin/v1/replies/r1/retry"}} {
		code, _ := en.do(req.method, req.path, opsToken, nil)
		require.Equal(t, http.StatusNotFound, code, req.path)
	}
}
