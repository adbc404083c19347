package inboxmcp_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/inboxmcp"
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

// watchEnv is the env with one watch service behind both the MCP tools and the agent API.
func watchEnv(t *testing.T, b *storetest.Backend) *env {
	t.Helper()
	lazy := &lazyWatches{}
	return newEnvWith(t, deliverytest.Config{Backend: b, API: []agentapi.Option{agentapi.WithWatches(lazy)}},
		func(d *deliverytest.Env) inboxmcp.Option {
			var st watch.Store = watchtest.NewMemory()
			if s, ok := any(d.Store).(watch.Store); ok {
				st = s
			}
			lazy.Service = watch.NewService(st, watch.Config{MaxPerAgent: 3}, kindstest.Resources(), watchScope, d.Inbox, service.Base{Now: d.Now})
			return inboxmcp.WithWatches(lazy)
		})
}

type watchResult struct {
	watch.Watch
	Created bool `json:"created"`
}

// TestWatchTools: the tools create, list and delete watches with the agent API's
// semantics and answer its refusals with the API's codes and messages.
func TestWatchTools(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := watchEnv(t, &b)
			cs := session(t, e, deliverytest.CoderToken)
			k := coderThread

			var w watchResult
			call(t, cs, "watch", args(k, map[string]any{"source": "github", "resource": "acme/API#7", "ttl": "1d", "kinds": []string{"pull_request.*"}}), &w)
			require.True(t, w.Created)
			require.Equal(t, "acme/api#7", w.Resource)
			require.Equal(t, "gh", w.Connector)
			require.Equal(t, w.CreatedAt.Add(24*time.Hour), w.ExpiresAt)
			var again watchResult
			call(t, cs, "watch", args(k, map[string]any{"source": "github", "resource": "acme/api#7"}), &again)
			require.False(t, again.Created, "the same thing again is the same watch")
			require.Equal(t, w.ID, again.ID)
			var fw watchResult
			call(t, cs, "watch", args(k, map[string]any{"source": "slack", "resource": "C1/1712345678.000100", "until": "forever", "priority": "high"}), &fw)
			require.True(t, fw.Forever)
			require.Equal(t, inbox.PriorityHigh, fw.Priority)

			var page struct {
				Watches    []watch.Watch `json:"watches"`
				NextCursor string        `json:"nextCursor"`
			}
			call(t, cs, "watches", args(k, nil), &page)
			require.Len(t, page.Watches, 2)
			require.Equal(t, fw.ID, page.Watches[0].ID, "newest first")
			call(t, cs, "watches", args(k, map[string]any{"limit": 1}), &page)
			require.Len(t, page.Watches, 1)
			require.NotEmpty(t, page.NextCursor)
			call(t, cs, "watches", args(k, map[string]any{"limit": 1, "cursor": page.NextCursor}), &page)
			require.Equal(t, w.ID, page.Watches[0].ID)

			var del watch.Watch
			call(t, cs, "unwatch", args(k, map[string]any{"id": fw.ID}), &del)
			require.Equal(t, watch.EndDeleted, del.EndReason)
			call(t, cs, "unwatch", args(k, map[string]any{"id": fw.ID}), &del)
			require.Equal(t, watch.EndDeleted, del.EndReason, "idempotent")
			call(t, cs, "watches", args(k, map[string]any{"status": "ended"}), &page)
			require.Len(t, page.Watches, 1)
			require.Equal(t, fw.ID, page.Watches[0].ID)
			call(t, cs, "watches", args(k, map[string]any{"status": "all"}), &page)
			require.Len(t, page.Watches, 2)

			call(t, cs, "watch", args(k, map[string]any{"source": "slack", "resource": "C2"}), nil)
			call(t, cs, "watch", args(k, map[string]any{"source": "slack", "resource": "C3"}), nil)

			// Every refusal reads as the agent API's answer: code, then message.
			other := inbox.ThreadKey{Agent: k.Agent, Resource: k.Resource, Thread: "elsewhere"}
			for name, tc := range map[string]struct {
				tool   string
				k      inbox.ThreadKey
				in     map[string]any
				status int
			}{
				"bad resource": {"watch", k, map[string]any{"source": "github", "resource": "acme"}, http.StatusBadRequest},
				"bad ttl":      {"watch", k, map[string]any{"source": "slack", "resource": "C9", "ttl": "soon"}, http.StatusBadRequest},
				"not his":      {"watch", k, map[string]any{"source": "github", "connector": "theirs", "resource": "acme/api#1"}, http.StatusForbidden},
				"unseen repo":  {"watch", k, map[string]any{"source": "github", "resource": "evil/secret#1"}, http.StatusBadRequest},
				"cap":          {"watch", k, map[string]any{"source": "slack", "resource": "C4"}, http.StatusTooManyRequests},
				"not found":    {"unwatch", other, map[string]any{"id": w.ID}, http.StatusNotFound},
			} {
				msg := toolError(t, cs, tc.tool, args(tc.k, tc.in))
				var api struct {
					Error struct {
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				method, path, body := http.MethodPost, "/watches", any(tc.in)
				if tc.tool == "unwatch" {
					method, path, body = http.MethodDelete, "/watches/"+tc.in["id"].(string), nil
				}
				require.Equal(t, tc.status, e.Do(method, e.ThreadURL(tc.k, path), e.Token(tc.k), body, &api), name)
				require.Equal(t, api.Error.Code+": "+api.Error.Message, msg, name)
			}
			require.Equal(t, "not_found: no such watch in this thread", toolError(t, cs, "unwatch", args(other, map[string]any{"id": w.ID})))
			require.Contains(t, toolError(t, cs, "watch", args(k, map[string]any{"source": "jira", "resource": "x"})), "validating", "the schema refuses it first")
			require.Contains(t, toolError(t, cs, "watches", args(k, map[string]any{"status": "dead"})), "validating")
			msg := toolError(t, cs, "watch", args(k, map[string]any{"source": "slack", "resource": "C5", "agentId": "support"}))
			require.Equal(t, `forbidden: the token of agent "coder" cannot access agent "support"'s threads`, msg)
			got, err := e.Agents.Thread("coder", "coder", k.Resource, k.Thread)
			require.NoError(t, err)
			require.Equal(t, k, got)
		})
	}
}

// TestWatchToolsListed: with the watch service the watch tools are listed (unwatch
// destructive, watches read-only); without it they are not offered.
func TestWatchToolsListed(t *testing.T) {
	e := watchEnv(t, nil)
	res, err := session(t, e, deliverytest.CoderToken).ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if strings.Contains(tool.Name, "watch") {
			require.Equal(t, tool.Name == "watches", tool.Annotations.ReadOnlyHint, tool.Name)
			if tool.Name != "watches" {
				require.Equal(t, tool.Name == "unwatch", *tool.Annotations.DestructiveHint, tool.Name)
			}
		}
	}
	sort.Strings(names)
	want := append([]string{"unwatch", "watch", "watches"}, inboxmcp.ToolNames...)
	sort.Strings(want)
	require.Equal(t, want, names)
}
