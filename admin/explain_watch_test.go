package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

const watchedMail = "From: Ann <ann@customer.example>\r\nTo: support@acme.example\r\nSubject: Re: my order\r\n" +
	"Message-ID: <second@customer.example>\r\nIn-Reply-To: <answer@acme.example>\r\n" +
	"References: <root@acme.example> <answer@acme.example>\r\n\r\nStill broken.\r\n"

// Explain shows the thread a watch adds to an event no route matches: a result of
// route "watch" naming the watch, and its notification.
func TestExplainNamesTheWatch(t *testing.T) {
	k := inbox.ThreadKey{Agent: "coder", Resource: "mail", Thread: "customer-1"}
	ws := watchtest.NewMemory()
	w := watch.Watch{ID: "w-1", Thread: k, Source: "email", Connector: "support", Resource: "root@acme.example",
		CreatedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, _, err := ws.CreateWatch(context.Background(), w, 10)
	require.NoError(t, err)
	en := newEnv(t, envOpts{watches: ws})
	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "email", "connector": "support", "body": watchedMail}, &x)
	require.Equal(t, inbox.EventRouted, x.Status, x.Reason)
	require.Contains(t, x.Routes, admin.RouteResult{Route: watch.Route, Item: 0, Matched: true, Thread: &k, Watch: "w-1"})
	require.Len(t, x.Notifications, 1)
	require.Equal(t, watch.Route, x.Notifications[0].Route)
}

// A `watched: true` route is explained with the watch that admitted its thread, or as
// no match when no watch of the thread hears the event.
func TestExplainWatchedRoute(t *testing.T) {
	k := inbox.ThreadKey{Agent: "support", Resource: "mail", Thread: "ann"}
	routes := []connectors.RouteConfig{{Name: "watched-mail", Watched: true, Match: connectors.RouteMatch{Source: inbox.StringList{"email"}},
		Thread: connectors.ThreadConfig{Agent: "support", Resource: "mail", Thread: "ann"}}}
	ws := watchtest.NewMemory()
	en := newEnv(t, envOpts{watches: ws, routes: routes})
	sample := map[string]any{"source": "email", "connector": "support", "body": watchedMail}
	var x admin.Explanation
	en.call(http.MethodPost, "/admin/v1/explain", sample, &x)
	require.Equal(t, []admin.RouteResult{{Route: "watched-mail", Item: 0, Thread: &k, Unwatched: true}}, x.Routes)
	require.Empty(t, x.Notifications)

	_, _, err := ws.CreateWatch(context.Background(), watch.Watch{ID: "w-2", Thread: k, Source: "email", Connector: "support",
		Resource: "answer@acme.example", CreatedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, 10)
	require.NoError(t, err)
	x = admin.Explanation{}
	en.call(http.MethodPost, "/admin/v1/explain", sample, &x)
	require.Equal(t, []admin.RouteResult{
		{Route: "watched-mail", Item: 0, Matched: true, Thread: &k, Watch: "w-2"},
		{Route: watch.Route, Item: 0, Matched: true, Thread: &k, Watch: "w-2", SameThreadAs: "watched-mail"},
	}, x.Routes)
	require.Len(t, x.Notifications, 1)
}
