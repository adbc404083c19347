package connectors_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
)

func newPipeline(t *testing.T) (*connectors.Pipeline, *connectorstest.Ingester) {
	t.Helper()
	r, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "ci",
		Match:  connectors.RouteMatch{Kind: inbox.StringList{"ci-failure"}},
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "ci"},
	}}, []string{"coder"})
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	return connectors.NewPipeline(r, ing, nil), ing
}

func item(kind string) connectors.Item {
	return connectors.Item{Kind: kind, Summary: "s", Fields: connectors.Fields{Source: "github", Repo: "acme/api"}}
}

func TestPipelineStatuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		items  []connectors.Item
		status inbox.EventStatus
		code   int
		n      int
	}{
		{"routed", []connectors.Item{item("ci-failure"), item("push")}, inbox.EventRouted, http.StatusOK, 1},
		{"unrouted", []connectors.Item{item("push")}, inbox.EventUnrouted, http.StatusAccepted, 0},
		{"unmapped", nil, inbox.EventIgnored, http.StatusAccepted, 0},
		{"all skipped", []connectors.Item{func() connectors.Item { i := item("ci-failure"); i.Skip = "bot"; return i }()},
			inbox.EventIgnored, http.StatusAccepted, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ing := newPipeline(t)
			ev := &inbox.Event{Source: "github", Connector: "acme", DeliveryID: "d1", Type: "x"}
			out, err := p.Ingest(context.Background(), ev, tc.items)
			require.NoError(t, err)
			assert.Equal(t, tc.status, out.Status)
			assert.Equal(t, tc.code, out.HTTPStatus())
			assert.Equal(t, tc.n, out.Records)
			assert.NotEmpty(t, out.EventID)
			call, ok := ing.Last()
			require.True(t, ok)
			assert.Equal(t, tc.status, call.Event.Status)
			assert.Len(t, call.Notifications, tc.n)
		})
	}
}

func TestPipelineDuplicateAndErrors(t *testing.T) {
	p, ing := newPipeline(t)
	ev := func() *inbox.Event { return &inbox.Event{Source: "github", Connector: "acme", DeliveryID: "d1"} }
	_, err := p.Ingest(context.Background(), ev(), []connectors.Item{item("ci-failure")})
	require.NoError(t, err)
	out, err := p.Ingest(context.Background(), ev(), []connectors.Item{item("ci-failure")})
	require.NoError(t, err)
	assert.True(t, out.Duplicate)
	assert.Equal(t, http.StatusOK, out.HTTPStatus())

	ing.Err = context.DeadlineExceeded
	_, err = p.Ingest(context.Background(), ev(), nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "the server maps deadline errors to 503")
}

func TestPipelineRecordsRouteErrors(t *testing.T) {
	r, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "needs-number",
		Thread: connectors.ThreadConfig{Agent: "coder", Resource: "{{.Repo}}", Thread: "{{if .Number}}{{.Number}}{{end}}"},
	}}, []string{"coder"})
	require.NoError(t, err)
	ing := connectorstest.NewIngester()
	p := connectors.NewPipeline(r, ing, nil)
	ev := &inbox.Event{Source: "github", Connector: "acme"}
	out, err := p.Ingest(context.Background(), ev, []connectors.Item{item("push")})
	require.NoError(t, err)
	assert.Equal(t, inbox.EventUnrouted, out.Status)
	call, _ := ing.Last()
	assert.Contains(t, call.Event.Error, `route "needs-number": thread.thread rendered empty`)
}
