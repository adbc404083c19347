package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func TestBadInputNamesTheParameter(t *testing.T) {
	en := newEnv(t, envOpts{})
	long := strings.Repeat("x", 513)
	threadCursor := inbox.Cursor{At: t0, ID: "not a thread"}.Encode()
	for _, c := range []struct{ method, target, msg string }{
		{"GET", "/admin/v1/events?limit=0", `limit: want 1 to 500, got "0"`},
		{"GET", "/admin/v1/events?limit=x", `limit: want 1 to 500, got "x"`},
		{"GET", "/admin/v1/events?cursor=!!!", "cursor: not a cursor this API returned"},
		{"GET", "/admin/v1/events?status=lost", `status: unknown "lost" (want routed, unrouted, ignored or invalid)`},
		{"GET", "/admin/v1/events?duplicate=maybe", `duplicate: want true or false, got "maybe"`},
		{"GET", "/admin/v1/events?since=yesterday", `since: want an RFC 3339 time like 2026-11-02T09:00:00Z, got "yesterday"`},
		{"GET", "/admin/v1/events?since=2026-11-02T10:00:00Z&until=2026-11-02T09:00:00Z", "until: must be after since"},
		{"GET", "/admin/v1/events?type=a&kind=b", `kind: names the event type too; got type "a" and kind "b"`},
		{"GET", "/admin/v1/events?source=%01", "source: contains control characters"},
		{"GET", "/admin/v1/events?connector=%ff", "connector: not valid UTF-8"},
		{"GET", "/admin/v1/events?source=" + long, "source: longer than 512 bytes"},
		{"GET", "/admin/v1/events?source=a&source=b", "source: given 2 times, want once"},
		{"GET", "/admin/v1/events?sauce=github", `unknown query parameter "sauce"`},
		{"POST", "/admin/v1/events/replay?limit=501", `limit: want 1 to 500, got "501"`},
		{"POST", "/admin/v1/events/replay?replays=sure", `replays: want true or false, got "sure"`},
		{"GET", "/admin/v1/notifications?status=done", `status: unknown "done"`},
		{"GET", "/admin/v1/notifications?priority=p1", `priority: unknown "p1" (want low, medium, high or urgent)`},
		{"GET", "/admin/v1/notifications?cursor=Zm9v", "cursor: not a cursor this API returned"},
		{"GET", "/admin/v1/notifications?text=%00", "text: contains control characters"},
		{"POST", "/admin/v1/notifications/redeliver?cursor=x", `unknown query parameter "cursor"`},
		{"GET", "/admin/v1/threads?presence=busy", `presence: unknown "busy" (want active or idle)`},
		{"GET", "/admin/v1/threads?pending=x", `pending: want true or false, got "x"`},
		{"GET", "/admin/v1/threads?cursor=" + threadCursor, "cursor: not a cursor this API returned"},
		{"GET", "/admin/v1/deliveries?cursor=abc", "cursor: not a cursor this API returned"},
		{"GET", "/admin/v1/deliveries?cursor=0", "cursor: not a cursor this API returned"},
		{"GET", "/admin/v1/connectors?verbose=1", `unknown query parameter "verbose"`},
		{"GET", "/admin/v1/events/%01", "id: contains control characters"},
		{"GET", "/admin/v1/notifications/" + long, "id: longer than 512 bytes"},
		{"POST", "/admin/v1/notifications/%E2%28/dismiss", "id: not valid UTF-8"},
	} {
		code, raw := en.do(c.method, c.target, opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code, "%s %s: %s", c.method, c.target, raw)
		errCode, msg := errorOf(t, raw)
		require.Equal(t, "bad_request", errCode)
		require.Contains(t, msg, c.msg, "%s %s", c.method, c.target)
	}
}

// TestSQLMetacharactersInEveryFilter sends quotes, comments, LIKE wildcards and
// escapes through every free-text filter of every listing. Filters are bound
// parameters: they match literally, never widen a query, and never change a table.
func TestSQLMetacharactersInEveryFilter(t *testing.T) {
	nasty := []string{`' OR '1'='1`, `"; DROP TABLE events; --`, `%`, `_`, `\`, `%' --`, `') OR 1=1 --`, `*`, "acme' /*", `]`}
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		seed(t, en)
		// A record whose summary holds the metacharacters, to prove they match literally.
		const summary = `100% of invoice_1 \ 'quoted'`
		literal := en.deliver("msg_lit", invoice("lit", summary))
		before := snapshot(t, en)

		listings := []struct {
			path    string
			filters []string
			field   string
		}{
			{"/admin/v1/events", []string{"source", "connector", "type", "kind"}, "events"},
			{"/admin/v1/notifications", []string{"agent", "resource", "thread", "source", "kind", "text", "event"}, "notifications"},
			{"/admin/v1/threads", []string{"agent", "resource", "thread"}, "threads"},
			{"/admin/v1/deliveries", []string{"signal"}, "deliveries"},
		}
		for _, l := range listings {
			for _, f := range l.filters {
				for _, v := range nasty {
					var out map[string][]map[string]any
					en.call(http.MethodGet, l.path+"?"+f+"="+url.QueryEscape(v), nil, &out)
					if f == "text" && strings.Contains(summary, v) {
						require.Len(t, out[l.field], 1, "text=%q", v) // literally in the summary
						require.Equal(t, literal.EventID, out[l.field][0]["eventId"])
						continue
					}
					require.Empty(t, out[l.field], "%s?%s=%q matched something", l.path, f, v)
				}
			}
		}
		for _, v := range nasty {
			code, _ := en.do(http.MethodGet, "/admin/v1/deliveries?record="+url.QueryEscape(v), opsToken, nil)
			require.Equal(t, http.StatusNotFound, code)
			code, _ = en.do(http.MethodGet, "/admin/v1/deliveries?agent="+url.QueryEscape(v)+"&resource=a&thread=b", opsToken, nil)
			require.Equal(t, http.StatusOK, code)
			for _, path := range []string{"/admin/v1/events/", "/admin/v1/notifications/"} {
				code, _ = en.do(http.MethodGet, path+url.PathEscape(v), opsToken, nil)
				require.Equal(t, http.StatusBadRequest, code, path+v)
			}
			var x admin.Explanation
			code, _ = en.do(http.MethodPost, "/admin/v1/explain", opsToken, map[string]any{"eventId": v})
			require.Equal(t, http.StatusNotFound, code)
			en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing",
				"deliveryId": v, "body": map[string]any{"kind": v, "summary": v, "coalesceKey": v, "attributes": map[string]any{"customer": v}}}, &x)
			require.Empty(t, x.DuplicateOf)
			require.Nil(t, x.Notifications[0].Merge)
			var replays struct {
				Replayed []any `json:"replayed"`
			}
			en.call(http.MethodPost, "/admin/v1/events/replay?source="+url.QueryEscape(v), nil, &replays)
			require.Empty(t, replays.Replayed)
			var redelivered struct {
				Redelivered []string `json:"redelivered"`
			}
			en.call(http.MethodPost, "/admin/v1/notifications/redeliver?text="+url.QueryEscape(v), nil, &redelivered)
			require.Empty(t, redelivered.Redelivered)
		}
		require.Equal(t, before, snapshot(t, en), "nothing changed")

		// Literal matching: each metacharacter finds exactly the record holding it.
		var out recordList
		for _, v := range []string{`100%`, `invoice_1`, `\`, `'quoted'`} {
			en.call(http.MethodGet, "/admin/v1/notifications?text="+url.QueryEscape(v), nil, &out)
			require.Len(t, out.Notifications, 1, v)
			require.Equal(t, literal.EventID, out.Notifications[0].EventID)
		}
		n, err := store.NewAdmin(en.st).CountEvents(context.Background())
		require.NoError(t, err)
		require.Equal(t, before[0], n)
	})
}
