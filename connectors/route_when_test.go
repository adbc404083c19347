package connectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/condition"
)

func TestRouteWhen(t *testing.T) {
	routes := decodeRoutes(t, `
routes:
  - name: lint
    match:
      source: github
      when: 'payload.check_run.name matches "^lint" && fields.repo == "acme/api"'
    thread: { agent: coder, resource: "{{.Repo}}", thread: "lint" }
  - name: humans
    match:
      when: 'metadata.author == "alice" && "P1" in fields.labels && attributes.number == 7 && route == "humans" && priority == "urgent"'
    thread: { agent: coder, resource: "{{.Repo}}", thread: "humans" }
    priority: urgent
`)
	r, err := NewRouter(routes, []string{"coder"})
	require.NoError(t, err)
	require.True(t, r.UsesPayload())

	it := githubItem()
	lint := condition.DecodePayload([]byte(`{"check_run":{"name":"lint / go"}}`))
	ns, errs := r.RouteEvent(lint, []Item{it})
	require.Empty(t, errs)
	require.Len(t, ns, 2)
	assert.Equal(t, "lint", ns[0].Thread.Thread)
	assert.Equal(t, "humans", ns[1].Thread.Thread)

	ns, _ = r.RouteEvent(condition.DecodePayload([]byte(`{"check_run":{"name":"test"}}`)), []Item{it})
	require.Len(t, ns, 1)
	assert.Equal(t, "humans", ns[0].Thread.Thread)

	// No body to look at: the payload condition cannot hold, and explain says why.
	tr := r.RouteTraced(nil, []Item{it}).Traces[0]
	assert.False(t, tr[0].Matched)
	assert.Equal(t, `payload.check_run.name matches "^lint" && fields.repo == "acme/api"`, tr[0].When)
	assert.Error(t, tr[0].WhenErr)
	assert.True(t, tr[1].Matched)
}

func TestRouteWhenConfigError(t *testing.T) {
	_, err := NewRouter(decodeRoutes(t, `
routes:
  - name: bad
    match: { when: 'presence == "idle"' }
    thread: { agent: coder, resource: r, thread: t }
  - name: worse
    match: { when: 'kind == ' }
    thread: { agent: coder, resource: r, thread: t }
`), []string{"coder"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "routes[0].match.when: line 1, column 1: unknown name presence")
	assert.Contains(t, err.Error(), "routes[1].match.when: line 1, column")
}
