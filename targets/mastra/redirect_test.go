package mastra_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// elsewhere is the host a hostile or compromised target redirects to: it must never see
// a request (the signal body and the Authorization header would go with it).
func elsewhere(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func redirecting(t *testing.T, to string, seen chan<- string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen <- r.URL.Path
		}
		http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTargetNeverFollowsRedirects(t *testing.T) {
	other, hits := elsewhere(t)
	srv := redirecting(t, other.URL, nil)
	target, err := mastra.New(config(srv.URL))
	require.NoError(t, err)
	_, err = target.Deliver(context.Background(), agent.Handoff{Thread: thread, Behavior: agent.BehaviorDeliver,
		Signal: agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: "notification", Contents: "hi"}})
	require.Error(t, err)
	var he *agent.DeliveryError
	require.ErrorAs(t, err, &he)
	require.False(t, he.Retry, "a redirect is not retried")
	require.Equal(t, http.StatusTemporaryRedirect, he.Status)
	require.Contains(t, err.Error(), "HTTP 307")
	require.Zero(t, hits.Load(), "the redirect was followed")
}

func TestFollowerNeverFollowsRedirects(t *testing.T) {
	other, hits := elsewhere(t)
	seen := make(chan string, 16)
	srv := redirecting(t, other.URL, seen)
	f := mastra.NewFollower(config(srv.URL), &presence{}, func([]inbox.ThreadKey) {}, service.Base{}, mastra.WithBackoff(time.Hour, time.Hour))
	require.NoError(t, f.Start(context.Background()))
	f.Follow(context.Background(), thread)
	require.Equal(t, "/api/agents/supportAgent/threads/subscribe", <-seen)
	require.NoError(t, f.Stop(context.Background()))
	require.Zero(t, hits.Load(), "the redirect was followed")
}

// A Mastra server behind a proxy whose path prefix and header are its credentials, which
// answers an unknown route by repeating the request: neither comes back in the error of a
// delivery or of a tool approval.
func TestEchoedCredentialsStayOutOfErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("Cannot POST " + r.URL.Path + " with " + r.Header.Get("Authorization")))
	}))
	t.Cleanup(srv.Close)
	cfg := config(srv.URL + "/gw-PREFIXSENTINEL")
	settings := cfg.Target.Settings.(mastra.Config)
	settings.Headers = map[string]secret.Secret{"Authorization": "Bearer KEYSENTINEL-0a9f"}
	cfg.Target.Settings = settings
	target, err := mastra.New(cfg)
	require.NoError(t, err)
	_, err = target.Deliver(context.Background(), agent.Handoff{Thread: thread, Behavior: agent.BehaviorDeliver,
		Signal: agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: "notification", Contents: "hi"}})
	require.ErrorContains(t, err, "HTTP 404: Cannot POST … with …")
	require.NotContains(t, err.Error(), "SENTINEL")

	err = mastra.NewToolApprovals([]agent.Config{cfg}, nil).SendToolApproval(context.Background(), thread, "call-1", true)
	require.ErrorContains(t, err, "HTTP 404: Cannot POST … with …")
	require.NotContains(t, err.Error(), "SENTINEL")
}
