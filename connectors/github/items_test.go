package github

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// itemsHandler serves deliveries into a fake inbox and also exposes the handler, so a
// stored event can be parsed again the way replay and explain do.
func itemsHandler(t *testing.T, state CIState) (*harness, *Handler, *connectors.Router) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	fake := connectorstest.NewIngester()
	h, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, fake, log), log, fixedNow, WithCIState(state))
	require.NoError(t, err)
	h.Mount(srv.Echo())
	return &harness{t: t, e: srv.Echo(), ing: fake, fake: fake}, h, router
}

func TestItemsReparseStoredEvent(t *testing.T) {
	hs, h, router := itemsHandler(t, NewMemoryCIState(0))
	require.Equal(t, http.StatusOK, hs.deliver("issue_comment", "d-1", issueCommentBody(t)).Code)
	call, _ := hs.fake.Last()

	stored := call.Event
	items, err := h.Items(context.Background(), &stored)
	require.NoError(t, err)
	ns, errs := router.Route(items)
	require.Empty(t, errs)
	assert.Equal(t, call.Notifications, ns, "parsing the stored event gives what the live delivery gave")

	// A sample carries its type in the header and may be the raw form body.
	form := url.Values{"payload": {string(issueCommentBody(t))}}.Encode()
	sample := inbox.Event{Connector: "acme", Body: []byte(form), Headers: map[string]string{
		"x-github-event": "issue_comment", "content-type": "application/x-www-form-urlencoded"}}
	items, err = h.Items(context.Background(), &sample)
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, KindComment, items[0].Kind)
}

func TestItemsOutcomes(t *testing.T) {
	_, h, _ := itemsHandler(t, NewMemoryCIState(0))
	ctx := context.Background()
	_, err := h.Items(ctx, &inbox.Event{Connector: "acme", Type: "made_up_event", Body: []byte(`{}`)})
	var nm *connectors.NotMapped
	require.ErrorAs(t, err, &nm)
	assert.Equal(t, `event type "made_up_event" is not mapped`, nm.Reason)

	m := pick(t, examples(t, "api.github.com"), "check_run", "rerequested", nil)
	_, err = h.Items(ctx, &inbox.Event{Connector: "acme", Type: "check_run", Body: encode(t, m)})
	require.NoError(t, err, "read leniently")
	_, err = h.Items(ctx, &inbox.Event{Connector: "acme", Type: "check_run", Body: []byte(`[]`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decode check_run payload")
	assert.NotErrorAs(t, err, &nm)

	_, err = h.Items(ctx, &inbox.Event{Connector: "nope", Type: "push", Body: []byte(`{}`)})
	assert.EqualError(t, err, `no github connector named "nope"`)
	_, err = h.Items(ctx, &inbox.Event{Connector: "acme", Body: []byte(`{}`)})
	assert.EqualError(t, err, "no event type: set the X-Github-Event header")
}

// TestItemsNeverWriteCIState: parsing a failure for replay or explain reads the CI
// memory but leaves it alone, so the next live success is judged as before.
func TestItemsNeverWriteCIState(t *testing.T) {
	ci := NewMemoryCIState(0)
	_, h, _ := itemsHandler(t, ci)
	m := pick(t, examples(t, "api.github.com"), "check_run", "completed", nil)
	set(m, "check_run.conclusion", "failure")
	items, err := h.Items(context.Background(), &inbox.Event{Connector: "acme", Type: "check_run", Body: encode(t, m)})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, KindCIFailure, items[0].Kind)
	assert.Empty(t, ci.last, "no conclusion remembered")
}
