package openaiagents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/openaiagents"
	"github.com/signalgate/signalgate/targets/session"
	"github.com/signalgate/signalgate/targets/session/sessiontest"
)

// headers are those the API reads: the library's auth form, beta, accept and the key.
var headers = []string{"authorization", "openai-beta", "accept", "content-type", "idempotency-key"}

var thread = inbox.ThreadKey{Agent: "builder", Resource: "repo:acme/app", Thread: "T1"}

// signal is the fixtures' signal: it renders as their message text.
func signal() agent.Handoff {
	s := agent.Signal{ID: "sig_1", Type: agent.TypeNotification, TagName: "signal", Contents: "deploy failed on main",
		Attributes: inbox.Attributes{}.Set("id", "sig_1").Set("priority", "high").Set("source", "slack")}
	return agent.Handoff{Thread: thread, Signal: s, Attempt: 1}
}

func api(t *testing.T, s *sessiontest.Server) *openaiagents.API {
	return openaiagents.NewAPI(openaiagents.Config{Common: session.Common{APIKey: "sk-test-signalgate", BaseURL: s.URL + "/v1",
		AgentID: "agent_fake", EnvironmentID: "env_fake"}}, s.Client(), 5*time.Second)
}

// TestRequestsAreTheLibrarys: each request the gateway makes is the one openai 7.55's
// client made for the same input (testdata/openai-requests.json, recorded by
// interop/hosted).
func TestRequestsAreTheLibrarys(t *testing.T) {
	fx := sessiontest.Fixtures(t, "testdata/openai-requests.json")
	ctx := context.Background()
	s := sessiontest.New(t, func(r sessiontest.Request) (int, string) {
		switch {
		case r.Method == http.MethodPost && r.Path == "/v1/agents/sessions":
			return 200, string(fx["sessions.create (saved agent, prewarmed hosted environment, metadata)"].Result)
		case strings.HasSuffix(r.Path, "/events"):
			return 202, ""
		}
		return 200, string(fx["sessions.retrieve (after agent.session.action_required: read required_actions)"].Result)
	})
	a := api(t, s)
	require.Equal(t, `<signal id="sig_1" priority="high" source="slack">deploy failed on main</signal>`, signal().Signal.XML())

	id, err := a.Create(ctx, thread)
	require.NoError(t, err)
	require.Equal(t, "sess_fake_1", id)
	_, err = a.Send(ctx, id, signal())
	require.NoError(t, err)
	snap, err := a.Read(ctx, id)
	require.NoError(t, err)
	require.NoError(t, a.Answer(ctx, id, "req_1", true))
	require.NoError(t, a.Interrupt(ctx, id))

	got := s.Requests()
	require.Len(t, got, 5)
	for i, name := range []string{
		"sessions.create (saved agent, prewarmed hosted environment, metadata)",
		"sessions.events.create (agent.session.input.message + Idempotency-Key)",
		"sessions.retrieve (after agent.session.action_required: read required_actions)",
		"answer action_required: computer_use_approval_request_result (browser_origin_access)",
		"cancel the active turn",
	} {
		t.Run(name, func(t *testing.T) { sessiontest.RequireSame(t, fx[name].Requests[0], got[i], headers...) })
	}
	require.Equal(t, session.Waiting, snap.State)
	require.Equal(t, "req_1", snap.Actions[0].ID)
	require.Empty(t, snap.Actions[0].Unanswerable)
}

// TestRetrySendsTheSameKey: a retry after a timeout carries the same Idempotency-Key,
// as the library's own retry does.
func TestRetrySendsTheSameKey(t *testing.T) {
	fx := sessiontest.Fixtures(t, "testdata/openai-requests.json")
	want := fx["sessions.events.create retried after a 500 (same Idempotency-Key, X-Stainless-Retry-Count 0 then 1)"].Requests
	first := true
	s := sessiontest.New(t, func(sessiontest.Request) (int, string) {
		if first {
			first = false
			return 500, `{"error":{"message":"boom"}}`
		}
		return 202, ""
	})
	a := api(t, s)
	// The fixture's message: a user's words, which render verbatim.
	d := agent.Handoff{Thread: thread, Signal: agent.Signal{ID: "sig_retry", Type: agent.TypeUser, Contents: "retry me"}, Attempt: 1}
	_, err := a.Send(context.Background(), "sess_fake_1", d)
	require.True(t, agent.DeliveryFailure(err).Retry, "a 500 is retried")
	d.Attempt = 2
	_, err = a.Send(context.Background(), "sess_fake_1", d)
	require.NoError(t, err)
	got := s.Requests()
	require.Len(t, got, 2)
	for i := range got {
		sessiontest.RequireSame(t, want[i], got[i], headers...)
	}
}

func TestParseEvent(t *testing.T) {
	id, ok, err := openaiagents.ParseEvent([]byte(`{"id":"evt_1","object":"event","created_at":1,"type":"agent.session.idle","data":{"id":"sess_1"}}`))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "sess_1", id)
	_, ok, err = openaiagents.ParseEvent([]byte(`{"type":"agent.session.created","data":{"id":"sess_1"}}`))
	require.NoError(t, err)
	require.False(t, ok, "not presence")
	_, _, err = openaiagents.ParseEvent([]byte(`{"type":"agent.session.idle","data":{}}`))
	require.ErrorContains(t, err, "data.id")
}

func TestValidate(t *testing.T) {
	err := openaiagents.Config{Environment: map[string]any{"type": "none"}}.WithDefaults().Validate()
	for _, key := range []string{"api_key:", "agent_id:", "webhook_secret:", "environment.type: none"} {
		require.ErrorContains(t, err, key)
	}
	c := openaiagents.Config{Common: session.Common{APIKey: "k", AgentID: "a", EnvironmentID: "e", WebhookSecret: "plain-secret-of-enough-length"}}.WithDefaults()
	require.NoError(t, c.Validate())
	require.ErrorContains(t, c.CheckCredentials(), "whsec_")
	raw, _ := json.Marshal(c.Describe())
	require.NotContains(t, string(raw), "plain-secret")
}

// TestProbe: check --connect reads the agent, and says which key to fix.
func TestProbe(t *testing.T) {
	status := http.StatusOK
	s := sessiontest.New(t, func(r sessiontest.Request) (int, string) {
		require.Equal(t, "/v1/agents/agent_fake", r.Path)
		require.Equal(t, "agents=v1", r.Headers["openai-beta"])
		return status, `{"id":"agent_fake"}`
	})
	c := openaiagents.Config{Common: session.Common{APIKey: "sk-secret-key", BaseURL: s.URL + "/v1", AgentID: "agent_fake"}}
	got, err := openaiagents.Probe(context.Background(), s.Client(), c, time.Second, "agents[0].target")
	require.NoError(t, err)
	require.Contains(t, got, "agent agent_fake answers")
	for st, key := range map[int]string{http.StatusNotFound: "agents[0].target.agent_id", http.StatusUnauthorized: "agents[0].target.api_key"} {
		status = st
		_, err = openaiagents.Probe(context.Background(), s.Client(), c, time.Second, "agents[0].target")
		require.ErrorContains(t, err, key)
		require.NotContains(t, err.Error(), "sk-secret-key")
	}
}
