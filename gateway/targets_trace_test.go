package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/webhook"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/telemetry/otlptest"
)

// Secrets users put into target URLs, as the tracing backend must never see them.
const (
	pathSecret  = "p4th-s3cr3t-7f3a9c"
	querySecret = "qu3ry-s3cr3t-41d2"
	userSecret  = "us3r-s3cr3t-pw"
)

// Every request the gateway makes to its agents (Mastra signals, aborts, suspended runs,
// tool approvals; webhook deliveries), answered or failed, reaches the tracing backend as
// a span whose url.full shows scheme and host only: no span a real OTLP exporter sends
// carries the path, query or userinfo of a target's URL.
func TestTargetSpansHideTheURLsSecrets(t *testing.T) {
	col := otlptest.NewReceiver()
	colSrv := httptest.NewServer(col)
	defer colSrv.Close()
	tr, err := telemetry.Setup(context.Background(), telemetry.Config{Traces: telemetry.TracesConfig{Endpoint: colSrv.URL}}, nil, "")
	require.NoError(t, err)
	require.True(t, tr.Enabled())

	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/threads/abort"):
			// A failed attempt: its span's error attributes must hide the URL too.
			http.Error(w, "Cannot POST "+r.URL.Path, http.StatusServiceUnavailable)
		case strings.HasSuffix(r.URL.Path, "/suspended-runs"):
			_, _ = io.WriteString(w, `{"runs":[],"total":0}`)
		default:
			_, _ = io.WriteString(w, `{"accepted":true}`)
		}
	}))
	defer agentSrv.Close()
	withUser := strings.Replace(agentSrv.URL, "http://", "http://admin:"+userSecret+"@", 1)
	cfgs := []agent.Config{
		{ID: "support", Token: "support-token-0123456789", Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Timeout: 5 * time.Second, Settings: mastra.Config{URL: withUser + "/" + pathSecret, AgentID: "supportAgent"}}},
		{ID: "hooks", Token: "hooks-token-0123456789", Target: agent.TargetConfig{Kind: webhook.Kind, Presence: webhook.PresenceSource, Timeout: 5 * time.Second, Settings: webhook.Config{URL: withUser + "/hooks/" + pathSecret + "?token=" + querySecret, Secret: secret.Secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}}},
	}
	for i := range cfgs {
		require.NoError(t, cfgs[i].Validate())
	}
	cfg := &Config{Agents: cfgs}
	built, err := cfg.buildTargets(targetBuild{runs: agent.NewRuns(nil, nil, cfgs), notify: func([]inbox.ThreadKey) {},
		stream: agent.NewStreamTarget(), traces: tr.Provider})
	require.NoError(t, err)
	routes := built.routes
	ctx := context.Background()
	d := func(k inbox.ThreadKey) agent.Handoff {
		return agent.Handoff{Thread: k, Behavior: agent.BehaviorWake, Attempt: 1,
			Signal: agent.Signal{ID: "sig-1", Type: agent.TypeNotification, TagName: agent.TagNotification, Contents: "x"}}
	}
	mk := inbox.ThreadKey{Agent: "support", Resource: "acme", Thread: "t1"}
	_, err = routes["support"].Target.Deliver(ctx, d(mk))
	require.NoError(t, err)
	_, err = routes["hooks"].Target.Deliver(ctx, d(inbox.ThreadKey{Agent: "hooks", Resource: "acme", Thread: "t1"}))
	require.NoError(t, err)
	// The agent operations' clients, built as the gateway builds them, and the list of
	// suspended runs a follower reconciles approvals with.
	runtimes := cfg.runtimeClients(httptarget.Traced(nil, tr.Provider), routes)
	require.Error(t, runtimes.AbortThread(ctx, mk, false))
	_, err = mastra.NewClient(cfgs, httptarget.Traced(nil, tr.Provider)).SuspendedRuns(ctx, "support")
	require.NoError(t, err)
	require.NoError(t, runtimes.SendToolApproval(ctx, mk, "call-1", true))
	require.NoError(t, tr.Shutdown(ctx)) // flushes every span to the collector

	var clients []otlptest.Span
	for _, s := range col.Spans() {
		if s.HasAttr("url.full") {
			clients = append(clients, s)
		}
		whole := s.Span.String() // name, attributes, events, status: all the backend gets
		for _, secret := range []string{pathSecret, querySecret, userSecret, "hooks/", "/api/agents"} {
			require.NotContains(t, whole, secret, "span %q", s.Name)
		}
	}
	require.Len(t, clients, 5, "a span per request: signal, webhook, abort, suspended runs, approval")
	for _, s := range clients {
		require.Equal(t, agentSrv.URL+"/…", s.Attr("url.full"), "scheme and host, the rest elided")
	}
}
