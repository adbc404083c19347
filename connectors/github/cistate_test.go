package github

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
)

var _ StateStore = (*store.ConnectorState)(nil)

func TestMemoryCIStateEvicts(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryCIState(2)
	require.NoError(t, s.SetConclusion(ctx, "a", "failure"))
	require.NoError(t, s.SetConclusion(ctx, "b", "failure"))
	require.NoError(t, s.SetConclusion(ctx, "a", "success")) // update, not a new key
	require.NoError(t, s.SetConclusion(ctx, "c", "failure"))
	got, _ := s.LastConclusion(ctx, "a")
	assert.Empty(t, got, "oldest key forgotten")
	got, _ = s.LastConclusion(ctx, "c")
	assert.Equal(t, "failure", got)
}

type failingState struct{}

func (failingState) LastConclusion(context.Context, string) (string, error) {
	return "", errors.New("db down")
}
func (failingState) SetConclusion(context.Context, string, string) error {
	return errors.New("db down")
}

// ciHandler builds a handler with the given CI state around a fresh fake inbox.
func ciHandler(t *testing.T, state CIState) *harness {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	require.NoError(t, err)
	fake := connectorstest.NewIngester()
	h, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, fake, log), log, fixedNow, WithCIState(state))
	require.NoError(t, err)
	h.Mount(srv.Echo())
	return &harness{t: t, e: srv.Echo(), ing: fake, fake: fake}
}

func TestCIStateErrorsDoNotFailDeliveries(t *testing.T) {
	m := pick(t, examples(t, "api.github.com"), "check_run", "completed", nil)
	set(m, "check_run.conclusion", "failure")
	h := ciHandler(t, failingState{})
	rec := h.deliver("check_run", "d-1", encode(t, m))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	set(m, "check_run.conclusion", "success")
	rec = h.deliver("check_run", "d-2", encode(t, m))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.fake.Last()
	require.Len(t, call.Notifications, 1)
	assert.Equal(t, KindCIPassed, call.Notifications[0].Kind, "without memory a success is not a recovery")
}

// TestStoreCIStateSurvivesRestart: a failure seen by one handler instance and a
// success seen by another (a restart, or another replica) make a recovery.
func TestStoreCIStateSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "gw.db")}, slog.New(slog.DiscardHandler))
	connState := store.NewConnectorState(st)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Migrate(ctx)
	require.NoError(t, err)

	m := pick(t, examples(t, "api.github.com"), "workflow_run", "completed", hasPRs("workflow_run.pull_requests", true))
	set(m, "workflow_run.conclusion", "failure")
	first := ciHandler(t, NewStoreCIState(connState, "github"))
	require.Equal(t, http.StatusOK, first.deliver("workflow_run", "d-1", encode(t, m)).Code)

	set(m, "workflow_run.conclusion", "success")
	second := ciHandler(t, NewStoreCIState(connState, "github"))
	rec := second.deliver("workflow_run", "d-2", encode(t, m))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := second.fake.Last()
	require.Len(t, call.Notifications, 1)
	assert.Equal(t, KindCIRecovered, call.Notifications[0].Kind)
}
