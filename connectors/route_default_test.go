package connectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// A route naming only its agent feeds each item's default thread; an item whose kind has
// none is a routing error naming it, and config refuses such a route for kinds that have
// none, or for no source at all.
func TestRouteNamingOnlyTheAgentTakesTheDefaultThread(t *testing.T) {
	opts := []RouterOption{WithSources("github", "alertmanager"), WithDefaultThreads("alertmanager")}
	r, err := NewRouter([]RouteConfig{{Name: "alerts", Match: RouteMatch{Source: inbox.StringList{"alertmanager"}}, Thread: ThreadConfig{Agent: "ops"}}},
		[]string{"ops"}, opts...)
	require.NoError(t, err)
	alert := Item{Kind: "alert-firing", Summary: "s", Fields: Fields{Source: "alertmanager"}, DefaultResource: "alertmanager/prod", DefaultThread: "HighLatency{cluster=eu1}"}
	ns, errs := r.Route([]Item{alert})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	assert.Equal(t, inbox.ThreadKey{Agent: "ops", Resource: "alertmanager/prod", Thread: "HighLatency{cluster=eu1}"}, ns[0].Thread)

	// Without a config-time rule (no WithDefaultThreads), an item with no default thread
	// is a routing error on it.
	loose, err := NewRouter([]RouteConfig{{Name: "any", Thread: ThreadConfig{Agent: "ops"}}}, []string{"ops"})
	require.NoError(t, err)
	ns, errs = loose.Route([]Item{{Kind: "push", Summary: "s", Fields: Fields{Source: "github"}}})
	require.Empty(t, ns)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `route "any": thread.resource, thread.thread: not set, and a github item has no default thread`)

	for _, tc := range []struct {
		rc   RouteConfig
		want []string
	}{
		{RouteConfig{Name: "gh", Match: RouteMatch{Source: inbox.StringList{"github"}}, Thread: ThreadConfig{Agent: "ops"}},
			[]string{`routes[0].match.source[0]: "github" has no default thread: name thread.resource and thread.thread (kinds with one: alertmanager)`}},
		{RouteConfig{Name: "all", Thread: ThreadConfig{Agent: "ops"}},
			[]string{"routes[0].thread.resource, thread.thread: required unless match.source names only kinds with a default thread (alertmanager)"}},
		{RouteConfig{Name: "half", Match: RouteMatch{Source: inbox.StringList{"alertmanager"}}, Thread: ThreadConfig{Agent: "ops", Resource: "r"}},
			[]string{"routes[0].thread.thread: required"}},
	} {
		_, err := NewRouter([]RouteConfig{tc.rc}, []string{"ops"}, opts...)
		require.Error(t, err, tc.rc.Name)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w)
		}
	}
}
