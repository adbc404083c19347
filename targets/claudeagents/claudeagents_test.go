package claudeagents_test

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
	"github.com/signalgate/signalgate/targets/claudeagents"
	"github.com/signalgate/signalgate/targets/session"
	"github.com/signalgate/signalgate/targets/session/sessiontest"
)

// headers are those the API reads: the library's auth form, version and beta.
var headers = []string{"authorization", "anthropic-version", "anthropic-beta", "accept", "content-type", "idempotency-key", "x-api-key"}

var thread = inbox.ThreadKey{Agent: "builder", Resource: "repo:acme/app", Thread: "T1"}

func signal() agent.Handoff {
	s := agent.Signal{ID: "sig_1", Type: agent.TypeNotification, TagName: "signal", Contents: "deploy failed on main",
		Attributes: inbox.Attributes{}.Set("id", "sig_1").Set("priority", "high").Set("source", "slack")}
	return agent.Handoff{Thread: thread, Signal: s, Attempt: 1}
}

func api(s *sessiontest.Server) *claudeagents.API {
	return claudeagents.NewAPI(claudeagents.Config{Common: session.Common{APIKey: "sk-ant-test-signalgate", BaseURL: s.URL,
		AgentID: "agent_fake", EnvironmentID: "env_fake"}}, s.Client(), 5*time.Second)
}

func page(t *testing.T, items json.RawMessage) string {
	raw, err := json.Marshal(map[string]any{"data": items})
	require.NoError(t, err)
	return string(raw)
}

// TestRequestsAreTheLibrarys: each request the gateway makes is the one
// @anthropic-ai/sdk 1.10's client made for the same input
// (testdata/anthropic-requests.json, recorded by interop/hosted).
func TestRequestsAreTheLibrarys(t *testing.T) {
	fx := sessiontest.Fixtures(t, "testdata/anthropic-requests.json")
	ctx := context.Background()
	s := sessiontest.New(t, func(r sessiontest.Request) (int, string) {
		switch {
		case r.Method == http.MethodPost && r.Path == "/v1/sessions":
			return 200, string(fx["sessions.create (agent id string, environment_id, metadata)"].Result)
		case r.Method == http.MethodPost:
			return 200, `{"data":[]}`
		case strings.Contains(r.Path, "/events"):
			return 200, page(t, fx["events.list (after session.requires_action: find stop_reason.event_ids)"].Result)
		}
		return 200, `{"id":"sesn_fake_1","status":"idle"}`
	})
	a := api(s)
	require.Equal(t, `<signal id="sig_1" priority="high" source="slack">deploy failed on main</signal>`, signal().Signal.XML())

	id, err := a.Create(ctx, thread)
	require.NoError(t, err)
	require.Equal(t, "sesn_fake_1", id)
	_, err = a.Send(ctx, id, signal())
	require.NoError(t, err)
	snap, err := a.Read(ctx, id)
	require.NoError(t, err)
	require.NoError(t, a.Answer(ctx, id, "sevt_tool", true))
	require.NoError(t, a.Answer(ctx, id, "sevt_tool", false))
	require.NoError(t, a.Interrupt(ctx, id))

	got := s.Requests()
	require.Len(t, got, 7)
	deny := fx["answer requires_action: user.tool_confirmation deny with message"].Requests[0]
	deny.Body = json.RawMessage(strings.Replace(string(deny.Body), "denied in Slack by @alice", "denied in Slack", 1))
	list := fx["events.list (after session.requires_action: find stop_reason.event_ids)"].Requests[0]
	list.Path = strings.Replace(list.Path, "limit=20", "limit=50", 1)
	for i, want := range []sessiontest.Request{
		fx["sessions.create (agent id string, environment_id, metadata)"].Requests[0],
		fx["sessions.events.send (user.message)"].Requests[0],
		fx["sessions.retrieve"].Requests[0],
		list,
		fx["answer requires_action: user.tool_confirmation allow"].Requests[0],
		deny,
		fx["interrupt"].Requests[0],
	} {
		sessiontest.RequireSame(t, want, got[i], headers...)
	}
	require.Equal(t, session.Waiting, snap.State)
	require.Equal(t, "sevt_tool", snap.Actions[0].ID)
	require.Equal(t, "bash", snap.Actions[0].Tool)
}

// TestRetryIsDeduplicated: the API takes no idempotency key, so a retry looks for its
// signal among the session's newest events first, and is not sent again when the first
// try was taken (its answer lost).
func TestRetryIsDeduplicated(t *testing.T) {
	fx := sessiontest.Fixtures(t, "testdata/anthropic-requests.json")
	var sent []json.RawMessage
	s := sessiontest.New(t, func(r sessiontest.Request) (int, string) {
		if r.Method == http.MethodPost {
			var b struct {
				Events []json.RawMessage `json:"events"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &b))
			sent = append(sent, b.Events...)
			return 500, `{"type":"error"}` // taken, but the answer says otherwise
		}
		raw, _ := json.Marshal(map[string]any{"data": sent})
		return 200, string(raw)
	})
	a := api(s)
	_, err := a.Send(context.Background(), "sesn_fake_1", signal())
	require.True(t, agent.DeliveryFailure(err).Retry)
	d := signal()
	d.Attempt = 2
	_, err = a.Send(context.Background(), "sesn_fake_1", d)
	require.NoError(t, err)
	require.Len(t, sent, 1, "the retry found the message and did not send it again")
	got := s.Requests()
	require.Len(t, got, 2)
	sessiontest.RequireSame(t, fx["sessions.events.send (user.message)"].Requests[0], got[0], headers...)
	require.Equal(t, "/v1/sessions/sesn_fake_1/events?order=desc&limit=50", got[1].Path)
}

func TestParseEvent(t *testing.T) {
	id, ok, err := claudeagents.ParseEvent([]byte(`{"id":"wevt_1","type":"event","created_at":"2026-05-01T00:00:00Z","data":{"id":"sesn_1","type":"session.status_idled"}}`))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "sesn_1", id)
	_, ok, _ = claudeagents.ParseEvent([]byte(`{"type":"event","data":{"id":"sesn_1","type":"session.created"}}`))
	require.False(t, ok)
}

func TestDefaults(t *testing.T) {
	c := claudeagents.Config{}.WithDefaults()
	require.Equal(t, claudeagents.DefaultBeta, c.Beta)
	err := c.Validate()
	for _, key := range []string{"api_key:", "agent_id:", "environment_id:", "webhook_secret:"} {
		require.ErrorContains(t, err, key)
	}
}

// TestProbe: check --connect reads the agent, and says which key to fix.
func TestProbe(t *testing.T) {
	status := http.StatusOK
	s := sessiontest.New(t, func(r sessiontest.Request) (int, string) {
		require.Equal(t, "/v1/agents/agent_fake", r.Path)
		require.Equal(t, claudeagents.DefaultBeta, r.Headers["anthropic-beta"])
		return status, `{"id":"agent_fake"}`
	})
	c := claudeagents.Config{Common: session.Common{APIKey: "sk-ant-secret-key", BaseURL: s.URL, AgentID: "agent_fake"}}
	got, err := claudeagents.Probe(context.Background(), s.Client(), c, time.Second, "agents[0].target")
	require.NoError(t, err)
	require.Contains(t, got, "agent agent_fake answers")
	for st, key := range map[int]string{http.StatusNotFound: "agents[0].target.agent_id", http.StatusForbidden: "agents[0].target.api_key"} {
		status = st
		_, err = claudeagents.Probe(context.Background(), s.Client(), c, time.Second, "agents[0].target")
		require.ErrorContains(t, err, key)
		require.NotContains(t, err.Error(), "sk-ant-secret-key")
	}
}
