package agentapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

// watchScope: coder may watch GitHub through gh (which receives events of acme/api
// only) and Slack through acme; support nothing.
var watchScope = watchtest.Scope{Allowed: map[string][]string{"coder/github": {"gh"}, "coder/slack": {"acme"}},
	Admits: map[string]watch.Admit{"github": github.AdmitWatch(nil, kindstest.Seen{"gh": {"acme/api"}})}}

type lazyWatches struct{ *watch.Service }

// watchStoreOf is the Env's store where it keeps watches, else the in-memory one.
func watchStoreOf(e *deliverytest.Env) watch.Store {
	if st, ok := any(e.Store).(watch.Store); ok {
		return st
	}
	return watchtest.NewMemory()
}

func watchEnv(t *testing.T, b *storetest.Backend, cfg watch.Config) *deliverytest.Env {
	t.Helper()
	lazy := &lazyWatches{}
	e := deliverytest.New(t, deliverytest.Config{Backend: b, API: []agentapi.Option{agentapi.WithWatches(lazy)}})
	lazy.Service = watch.NewService(watchStoreOf(e), cfg, kindstest.Resources(), watchScope, e.Inbox, service.Base{Now: e.Now})
	return e
}

type watchAnswer struct {
	watch.Watch
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestWatchAPI(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := watchEnv(t, &b, watch.Config{MaxPerAgent: 3})
			k := coderThread
			post := func(k inbox.ThreadKey, body any) (int, watchAnswer) {
				var out watchAnswer
				return e.Do(http.MethodPost, e.ThreadURL(k, "/watches"), e.Token(k), body, &out), out
			}

			code, w := post(k, map[string]any{"source": "github", "resource": "Acme/API#7", "kinds": []string{"pull_request.*"}, "ttl": "2d", "priority": "high"})
			require.Equal(t, http.StatusCreated, code, w.Error.Message)
			require.True(t, strings.HasPrefix(w.ID, "w-"))
			require.Equal(t, "gh", w.Connector, "the agent's only GitHub connector")
			require.Equal(t, "acme/api#7", w.Resource)
			require.Equal(t, []string{"pull_request.*"}, w.Kinds)
			require.Equal(t, inbox.PriorityHigh, w.Priority)
			require.Equal(t, w.CreatedAt.Add(48*time.Hour), w.ExpiresAt)

			code, again := post(k, map[string]any{"source": "github", "connector": "gh", "resource": "acme/api#7"})
			require.Equal(t, http.StatusOK, code, "the thread's live watch of the same thing")
			require.Equal(t, w.ID, again.ID)

			// Every refusal: status, code and a message naming the field.
			for name, tc := range map[string]struct {
				body   any
				status int
				code   string
				msg    string
			}{
				"unknown field":   {map[string]any{"source": "github", "resource": "acme/api#1", "sneaky": 1}, 400, "bad_request", `unknown field "sneaky"`},
				"wrong type":      {map[string]any{"source": "github", "resource": "acme/api#1", "kinds": "x"}, 400, "bad_request", "kinds"},
				"no body":         {"", 400, "bad_request", "request body"},
				"bad resource":    {map[string]any{"source": "github", "resource": "acme"}, 400, "invalid_request", "resource: want owner/repo#number"},
				"bad ttl":         {map[string]any{"source": "slack", "resource": "C1", "ttl": "soon"}, 400, "invalid_request", "ttl: want a duration"},
				"past until":      {map[string]any{"source": "slack", "resource": "C1", "until": "2001-01-01T00:00:00Z"}, 400, "invalid_request", "until: 2001-01-01T00:00:00Z is not in the future"},
				"too long ttl":    {map[string]any{"source": "slack", "resource": "C1", "ttl": "400d"}, 400, "invalid_request", "ttl: at most watches.max_ttl"},
				"not his":         {map[string]any{"source": "github", "connector": "theirs", "resource": "acme/api#1"}, 403, "forbidden", `may not watch through "theirs"; it may use gh`},
				"no email conn":   {map[string]any{"source": "email", "resource": "m@x"}, 403, "forbidden", `may watch no email connector`},
				"unseen repo":     {map[string]any{"source": "github", "resource": "evil/secret#1"}, 400, "unknown_resource", `connector "gh" receives no events for repository evil/secret`},
				"whole repo":      {map[string]any{"source": "github", "resource": "acme/api"}, 400, "invalid_request", "does not allow watching a whole repository"},
				"oversized":       {`{"source":"generic","resource":"` + strings.Repeat("a", agentapi.MaxWatchBody) + `"}`, 413, "too_large", "at most 16384 bytes"},
				"malformed":       {`{"source":`, 400, "bad_request", "malformed JSON"},
				"unknown source":  {map[string]any{"source": "jira", "resource": "X-1"}, 400, "invalid_request", `source: unknown "jira"`},
				"bad priority":    {map[string]any{"source": "slack", "resource": "C1", "priority": "now"}, 400, "invalid_request", `priority: unknown "now"`},
				"forever and ttl": {map[string]any{"source": "slack", "resource": "C1", "until": "forever", "ttl": "1h"}, 400, "invalid_request", "until, ttl"},
			} {
				code, out := post(k, tc.body)
				require.Equal(t, tc.status, code, "%s: %s", name, out.Error.Message)
				require.Equal(t, tc.code, out.Error.Code, name)
				require.Contains(t, out.Error.Message, tc.msg, name)
			}

			code, fw := post(k, map[string]any{"source": "slack", "resource": "c1/1712345678.000100", "until": "forever"})
			require.Equal(t, http.StatusCreated, code, fw.Error.Message)
			require.True(t, fw.Forever)
			code, sw := post(k, map[string]any{"source": "slack", "resource": "C2"})
			require.Equal(t, http.StatusCreated, code)
			code, out := post(k, map[string]any{"source": "slack", "resource": "C3"})
			require.Equal(t, http.StatusTooManyRequests, code, "watches.max_per_agent")
			require.Equal(t, "too_many_watches", out.Error.Code)
			other := inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: "other"}
			code, _ = post(other, map[string]any{"source": "slack", "resource": "C3"})
			require.Equal(t, http.StatusTooManyRequests, code, "the cap is the agent's, across threads")

			// Reading and deleting: the thread's own watches only.
			var got watchAnswer
			require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/watches/"+w.ID), e.Token(k), nil, &got))
			require.Equal(t, w.Watch.ID, got.ID)
			require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(other, "/watches/"+w.ID), e.Token(other), nil, &got))
			require.Equal(t, "no such watch in this thread", got.Error.Message)
			require.Equal(t, http.StatusNotFound, e.Do(http.MethodDelete, e.ThreadURL(other, "/watches/"+w.ID), e.Token(other), nil, &got),
				"another thread's watch cannot be deleted")
			require.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, e.ThreadURL(k, "/watches/"+w.ID), deliverytest.SupportToken, nil, &got))
			require.Equal(t, http.StatusBadRequest, e.Do(http.MethodGet, e.ThreadURL(k, "/watches/a%01b"), e.Token(k), nil, &got))

			var del watchAnswer
			require.Equal(t, http.StatusOK, e.Do(http.MethodDelete, e.ThreadURL(k, "/watches/"+sw.ID), e.Token(k), nil, &del))
			require.Equal(t, watch.EndDeleted, del.EndReason)
			require.NotNil(t, del.EndedAt)
			require.Equal(t, http.StatusOK, e.Do(http.MethodDelete, e.ThreadURL(k, "/watches/"+sw.ID), e.Token(k), nil, &del), "idempotent")
			require.Equal(t, watch.EndDeleted, del.EndReason)

			list := func(query string) (int, agentapi.WatchPage) {
				var p agentapi.WatchPage
				return e.Do(http.MethodGet, e.ThreadURL(k, "/watches"+query), e.Token(k), nil, &p), p
			}
			ids := func(p agentapi.WatchPage) []string {
				var out []string
				for _, w := range p.Watches {
					out = append(out, w.ID)
				}
				return out
			}
			code, p := list("")
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, []string{fw.ID, w.ID}, ids(p), "live by default, newest first")
			_, p = list("?status=ended")
			require.Equal(t, []string{sw.ID}, ids(p))
			_, p = list("?status=all&limit=2")
			require.Equal(t, []string{sw.ID, fw.ID}, ids(p))
			require.NotEmpty(t, p.NextCursor)
			_, p = list("?status=all&limit=2&cursor=" + p.NextCursor)
			require.Equal(t, []string{w.ID}, ids(p))
			require.Empty(t, p.NextCursor)
			for _, bad := range []string{"?status=dead", "?limit=0", "?limit=201", "?limit=x", "?cursor=%01"} {
				var out watchAnswer
				require.Equal(t, http.StatusBadRequest, e.Do(http.MethodGet, e.ThreadURL(k, "/watches"+bad), e.Token(k), nil, &out), bad)
				require.NotEmpty(t, out.Error.Message)
			}
			var empty map[string]any
			require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(other, "/watches"), e.Token(other), nil, &empty))
			require.Equal(t, []any{}, empty["watches"], "another thread has none")
		})
	}
}

func TestWatchAPIOffWithoutService(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	var out watchAnswer
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, e.ThreadURL(coderThread, "/watches"), e.Token(coderThread),
		map[string]any{"source": "slack", "resource": "C1"}, &out))
	require.Equal(t, "watches_disabled", out.Error.Code)
	require.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, e.ThreadURL(coderThread, "/watches"), "nope", nil, &out))
}
