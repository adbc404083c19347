package approval_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// A stream agent asks through the agent API; the decision reaches its thread as an
// <approval> signal that wakes it.
func TestAgentAPIApproval(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{
		{ID: "coder", Token: deliverytest.CoderToken, Target: agent.TargetConfig{Kind: agent.TargetStream}},
		{ID: "support", Token: deliverytest.SupportToken, Target: agent.TargetConfig{Kind: agent.TargetMastra, URL: "http://127.0.0.1:1", AgentID: "a"}},
	}})
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "deploy-7"}
	url := e.ThreadURL(k, "/approvals")
	tok := e.Token(k)
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodPost, url, tok, `{"tool":"rollback"}`, nil), "approvals not configured")

	slack := &fakeSlack{}
	svc := approval.New(approval.Config{SlackConnector: "acme", Channel: "C0APPROVE", Approvers: []string{"U0JANE"}},
		approval.Deps{Store: e.Store, Places: e.Store, Slack: slack, Emitter: e.API, Now: e.Now})
	e.API.Approvals = svc
	sub := e.Subscribe(k, "", "")

	for body, want := range map[string]int{
		`{}`:                            http.StatusBadRequest,
		`{"tool":"rollback","extra":1}`: http.StatusBadRequest,
		`{"tool":"` + strings.Repeat("x", 201) + `"}`:                         http.StatusBadRequest,
		`{"tool":"rollback","arguments":"` + strings.Repeat("x", 9000) + `"}`: http.StatusRequestEntityTooLarge,
	} {
		require.Equal(t, want, e.Do(http.MethodPost, url, tok, body, nil), body)
	}
	mk := inbox.ThreadKey{Agent: "support", Resource: "r", Thread: "t"}
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(mk, "/approvals"), e.Token(mk), `{"tool":"x"}`, nil),
		"a mastra agent asks through Mastra")

	var a approval.Approval
	body := `{"id":"rollback-7","tool":"rollback","description":"Roll back api to v41","arguments":{"to":"v41"}}`
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, url, tok, body, &a))
	require.Equal(t, approval.StatusPending, a.Status)
	require.Equal(t, "C0APPROVE", a.Channel)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, url, tok, body, &a), "a resend returns the first")

	notice, err := svc.Decide(t.Context(), approval.Click{Connector: "acme", ApprovalID: a.ID, Approve: false, UserID: "U0JANE", UserName: "Jane"})
	require.NoError(t, err)
	require.Empty(t, notice)
	run := sub.Next(10 * time.Second)
	require.Equal(t, "run", run.Event)
	ev := sub.Next(10 * time.Second)
	require.Equal(t, "wake", ev.Str("action"))
	require.Equal(t, `<approval tool="rollback" decision="declined" by="Jane">Roll back api to v41</approval>`, ev.Str("xml"))
}
