package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

type adminWatchPage struct {
	Watches []struct {
		ID         string     `json:"id"`
		Agent      string     `json:"agent"`
		ResourceID string     `json:"resourceId"`
		ThreadID   string     `json:"threadId"`
		Source     string     `json:"source"`
		Connector  string     `json:"connector"`
		Resource   string     `json:"resource"`
		EndedAt    *time.Time `json:"endedAt"`
		EndReason  string     `json:"endReason"`
	} `json:"watches"`
	NextCursor string `json:"nextCursor"`
}

func (p adminWatchPage) ids() []string {
	out := make([]string, len(p.Watches))
	for i, w := range p.Watches {
		out[i] = w.ID
	}
	return out
}

// ender ends watches in the store as watch.Service.End does, and records each call.
type ender struct {
	st    *watchtest.Memory
	now   func() time.Time
	mu    sync.Mutex
	calls []string
}

func (e *ender) End(ctx context.Context, id, reason string) (watch.Watch, bool, error) {
	e.mu.Lock()
	e.calls = append(e.calls, id+" "+reason)
	e.mu.Unlock()
	return e.st.EndWatch(ctx, id, reason, e.now())
}

func (e *ender) called() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

var (
	coderPR   = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	coderPR8  = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#8"}
	supportDM = inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
)

// withWatches stores four watches (the third ended) and serves them; it returns their
// ids oldest first.
func (en *env) withWatches(t *testing.T) ([]string, *ender) {
	t.Helper()
	ctx := context.Background()
	st := watchtest.NewMemory()
	rows := []struct {
		k                      inbox.ThreadKey
		source, conn, resource string
	}{
		{coderPR, "github", "gh", "acme/api#7"},
		{coderPR8, "github", "gh", "acme/api#8"},
		{coderPR, "slack", "ops", "C0123/1712345678.000100"},
		{supportDM, "email", "support", "a1@mail.example"},
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		at := t0.Add(time.Duration(i) * time.Second)
		w := watch.Watch{ID: watch.NewID(), Thread: r.k, Source: r.source, Connector: r.conn, Resource: r.resource,
			CreatedAt: at, ExpiresAt: at.Add(watch.DefaultTTL)}
		_, created, err := st.CreateWatch(ctx, w, 100)
		require.NoError(t, err)
		require.True(t, created)
		ids[i] = w.ID
	}
	_, ended, err := st.EndWatch(ctx, ids[2], watch.EndDeleted, t0.Add(time.Minute))
	require.NoError(t, err)
	require.True(t, ended)
	e := &ender{st: st, now: en.clock.Now}
	d := en.deps
	d.Watches, d.WatchEnder = st, e
	en.api = en.newAPI(d)
	return ids, e
}

func TestListWatches(t *testing.T) {
	en := newEnv(t, envOpts{})
	ids, _ := en.withWatches(t)
	list := func(q string) adminWatchPage {
		t.Helper()
		var page adminWatchPage
		en.call(http.MethodGet, "/admin/v1/watches"+q, nil, &page)
		return page
	}

	page := list("")
	require.Equal(t, []string{ids[3], ids[1], ids[0]}, page.ids(), "live ones by default, newest first")
	w := page.Watches[2]
	require.Equal(t, "coder", w.Agent)
	require.Equal(t, "acme/api", w.ResourceID)
	require.Equal(t, "acme/api#7", w.ThreadID, "the watch carries its thread")
	require.Equal(t, "acme/api#7", w.Resource)
	require.Equal(t, []string{ids[2]}, list("?status=ended").ids())
	require.Equal(t, watch.EndDeleted, list("?status=ended").Watches[0].EndReason)
	require.Equal(t, []string{ids[3], ids[2], ids[1], ids[0]}, list("?status=all").ids())

	require.Equal(t, []string{ids[1], ids[0]}, list("?agent=coder").ids())
	one := "?" + url.Values{"agent": {"coder"}, "resourceId": {"acme/api"}, "threadId": {"acme/api#7"}, "status": {"all"}}.Encode()
	require.Equal(t, []string{ids[2], ids[0]}, list(one).ids(), "one thread's watches, not its neighbour's")
	require.Equal(t, []string{ids[3]}, list("?source=email").ids())
	require.Equal(t, []string{ids[2]}, list("?connector=ops&status=all").ids())
	require.Equal(t, []string{ids[1]}, list("?"+url.Values{"resource": {"acme/api#8"}}.Encode()).ids())

	// Paging: the cursor is the page's last id.
	first := list("?status=all&limit=3")
	require.Equal(t, []string{ids[3], ids[2], ids[1]}, first.ids())
	require.NotEmpty(t, first.NextCursor)
	rest := list("?status=all&limit=3&cursor=" + url.QueryEscape(first.NextCursor))
	require.Equal(t, []string{ids[0]}, rest.ids())
	require.Empty(t, rest.NextCursor)
}

// A filter that would silently widen, or that cannot be read, is a 400 naming it.
func TestListWatchesRejectsBadFilters(t *testing.T) {
	en := newEnv(t, envOpts{})
	en.withWatches(t)
	for q, want := range map[string]string{
		"?status=gone":                                   "status",
		"?resourceId=acme%2Fapi":                         "resourceId and threadId",
		"?agent=coder&threadId=acme%2Fapi%237":           "resourceId and threadId",
		"?resourceId=acme%2Fapi&threadId=acme%2Fapi%237": "resourceId and threadId",
		"?thread=acme%2Fapi%237":                         "unknown query parameter",
		"?agent=coder&agent=support":                     "agent",
		"?limit=0":                                       "limit",
		"?limit=501":                                     "limit",
		"?cursor=%3Cscript%3E":                           "cursor",
		"?agent=%00":                                     "agent",
	} {
		code, raw := en.do(http.MethodGet, "/admin/v1/watches"+q, viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", q, raw)
		_, msg := errorOf(t, raw)
		require.Contains(t, msg, want, q)
	}
}

func TestGetWatch(t *testing.T) {
	en := newEnv(t, envOpts{})
	ids, _ := en.withWatches(t)
	var w struct {
		ID, Agent, ResourceID, ThreadID, Source, Connector, Resource, EndReason string
		CreatedAt, ExpiresAt                                                    time.Time
	}
	code, raw := en.do(http.MethodGet, "/admin/v1/watches/"+ids[2], viewerToken, nil)
	require.Equal(t, http.StatusOK, code, "reading needs the read scope only: %s", raw)
	en.call(http.MethodGet, "/admin/v1/watches/"+ids[2], nil, &w)
	require.Equal(t, ids[2], w.ID)
	require.Equal(t, "coder", w.Agent)
	require.Equal(t, "acme/api", w.ResourceID)
	require.Equal(t, "acme/api#7", w.ThreadID)
	require.Equal(t, "C0123/1712345678.000100", w.Resource)
	require.Equal(t, watch.EndDeleted, w.EndReason)
	require.Equal(t, t0.Add(2*time.Second), w.CreatedAt.UTC())

	code, raw = en.do(http.MethodGet, "/admin/v1/watches/w-0190c1d2-0000-7000-8000-000000000000", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code, string(raw))
	code, _ = en.do(http.MethodGet, "/admin/v1/watches/"+url.PathEscape("no such/../id"), opsToken, nil)
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = en.do(http.MethodGet, "/admin/v1/watches/"+ids[0], "", nil)
	require.Equal(t, http.StatusUnauthorized, code)
}

// DELETE ends a watch through the watch service (which tells the thread) with reason
// operator; a repeat answers the watch as it is and ends nothing again.
func TestDeleteWatch(t *testing.T) {
	en := newEnv(t, envOpts{})
	ids, e := en.withWatches(t)

	code, raw := en.do(http.MethodDelete, "/admin/v1/watches/"+ids[0], viewerToken, nil)
	require.Equal(t, http.StatusForbidden, code, "a read-only token ended a watch: %s", raw)
	require.Empty(t, e.called())

	var w struct {
		ID, Agent, ResourceID, ThreadID, EndReason string
		EndedAt                                    *time.Time
	}
	en.call(http.MethodDelete, "/admin/v1/watches/"+ids[0], nil, &w)
	require.Equal(t, ids[0], w.ID)
	require.Equal(t, watch.EndOperator, w.EndReason)
	require.NotNil(t, w.EndedAt)
	require.Equal(t, coderPR, inbox.ThreadKey{Agent: w.Agent, Resource: w.ResourceID, Thread: w.ThreadID})
	require.Equal(t, []string{ids[0] + " " + watch.EndOperator}, e.called())

	// Again: 200 with the watch as it is (still ended by the operator).
	en.clock.Advance(time.Hour)
	var again struct {
		EndReason string
		EndedAt   *time.Time
	}
	en.call(http.MethodDelete, "/admin/v1/watches/"+ids[0], nil, &again)
	require.Equal(t, watch.EndOperator, again.EndReason)
	require.Equal(t, w.EndedAt.UTC(), again.EndedAt.UTC(), "a repeat does not end it again")
	// A watch the agent deleted keeps its reason.
	en.call(http.MethodDelete, "/admin/v1/watches/"+ids[2], nil, &again)
	require.Equal(t, watch.EndDeleted, again.EndReason)

	var page adminWatchPage
	en.call(http.MethodGet, "/admin/v1/watches?agent=coder", nil, &page)
	require.Equal(t, []string{ids[1]}, page.ids(), "the ended watch is no longer live")

	code, raw = en.do(http.MethodDelete, "/admin/v1/watches/w-0190c1d2-0000-7000-8000-000000000000", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code, string(raw))
	code, _ = en.do(http.MethodDelete, "/admin/v1/watches/"+url.PathEscape("<script>"), opsToken, nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Len(t, e.called(), 4, "only well-formed ids reach the service")
}

// Without watches configured the list is empty and an id is unknown.
func TestWatchesWithoutService(t *testing.T) {
	en := newEnv(t, envOpts{})
	var page adminWatchPage
	en.call(http.MethodGet, "/admin/v1/watches", nil, &page)
	require.NotNil(t, page.Watches)
	require.Empty(t, page.Watches)
	code, _ := en.do(http.MethodGet, "/admin/v1/watches/w-1", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = en.do(http.MethodDelete, "/admin/v1/watches/w-1", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = en.do(http.MethodGet, "/admin/v1/watches?status=gone", opsToken, nil)
	require.Equal(t, http.StatusBadRequest, code)
}
