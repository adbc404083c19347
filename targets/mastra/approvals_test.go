package mastra_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
)

// Mastra's own answer for a thread with nothing waiting (an HTTP 500 naming it) is a
// stale approval; a Mastra that is down is not.
func TestToolApprovalsAnswers(t *testing.T) {
	base := mastraServer(t, 100*time.Millisecond)
	cfg := agent.Config{ID: "support", Target: agent.TargetConfig{Kind: mastra.Kind, Presence: mastra.PresenceSource, Settings: mastra.Config{URL: base, AgentID: "interopAgent"}}}
	ta := mastra.NewToolApprovals([]agent.Config{cfg, {ID: "coder", Target: agent.TargetConfig{Kind: agent.TargetStream}}}, nil)
	ctx := context.Background()
	k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "nothing-waits"}
	err := ta.SendToolApproval(ctx, k, "call-404", true)
	require.ErrorIs(t, err, approval.ErrStale, "%v", err)
	require.ErrorContains(t, ta.SendToolApproval(ctx, inbox.ThreadKey{Agent: "coder"}, "c", true), "not a mastra agent")

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/agents/interopAgent/send-tool-approval", r.URL.Path)
		require.Equal(t, "Bearer mk-0123456", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	cfg.Target.Settings = mastra.Config{URL: down.URL, AgentID: "interopAgent", Headers: map[string]secret.Secret{"Authorization": "Bearer mk-0123456"}}
	err = mastra.NewToolApprovals([]agent.Config{cfg}, nil).SendToolApproval(ctx, k, "call-1", false)
	require.Error(t, err)
	require.False(t, errors.Is(err, approval.ErrStale), "a Mastra that is down keeps the approval pending")
}

type hookCalls struct {
	mu    sync.Mutex
	calls []string
}

func (h *hookCalls) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, s)
}

func (h *hookCalls) ToolApproval(_ context.Context, _ inbox.ThreadKey, runID, call, tool string, args json.RawMessage) {
	h.add("approval " + runID + " " + call + " " + tool + " " + string(args))
}
func (h *hookCalls) ToolSuspended(_ context.Context, _ inbox.ThreadKey, runID, call, tool string, payload json.RawMessage) {
	h.add("question " + runID + " " + call + " " + tool + " " + string(payload))
}
func (h *hookCalls) ToolAnswered(_ context.Context, _ inbox.ThreadKey, call string) {
	h.add("answered " + call)
}
func (h *hookCalls) RunEnded(_ context.Context, _ inbox.ThreadKey, runID string) {
	h.add("ended " + runID)
}
func (h *hookCalls) Reconcile(_ context.Context, agentID string, calls []approval.SuspendedCall) error {
	for _, c := range calls {
		h.add(fmt.Sprintf("suspended %s %s %s %s %v", c.Thread, c.RunID, c.ToolCallID, c.Tool, c.RequiresApproval))
	}
	return nil
}

// The follower reports approvals (replays included: the service keeps the first), a
// declined call's tool-output-denied ends the suspension, and the run's end is told.
func TestFollowerReportsApprovals(t *testing.T) {
	streams := []string{
		`data: {"type":"start","runId":"m1"}` + "\n\n" +
			`data: {"type":"tool-call-approval","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy","args":{"env":"prod"}}}` + "\n\n" +
			`data: {"type":"tool-call-suspended","runId":"m1","from":"AGENT","payload":{"toolCallId":"c2","toolName":"ask_user","args":{"question":"Which env?"},"suspendPayload":{"question":"Which env?"}}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"finishReason":"suspended"}}` + "\n\n" +
			`data: {"type":"tool-output-denied","runId":"m1","payload":{"toolCallId":"c1","toolName":"deploy"}}` + "\n\n" +
			`data: {"type":"tool-result","runId":"m1","payload":{"toolCallId":"c2","toolName":"ask_user"}}` + "\n\n" +
			`data: {"type":"tool-result","runId":"m1","payload":{"toolCallId":"c9","toolName":"search"}}` + "\n\n" +
			`data: {"type":"finish","runId":"m1","payload":{"stepResult":{"reason":"stop"}}}` + "\n\n",
	}
	p := &presence{}
	h := &hookCalls{}
	idle := make(chan inbox.ThreadKey, 10)
	f := mastra.NewFollower(config(scriptedStreams(t, streams)), p, func(ks []inbox.ThreadKey) { idle <- ks[0] }, service.Base{},
		mastra.WithBackoff(time.Millisecond, 10*time.Millisecond), mastra.WithApprovals(h))
	require.NoError(t, f.Start(context.Background()))
	f.Follow(context.Background(), thread)
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the run never ended: the declined call kept it suspended")
	}
	require.NoError(t, f.Stop(context.Background()))
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Equal(t, []string{`approval m1 c1 deploy {"env":"prod"}`, `question m1 c2 ask_user {"question":"Which env?"}`,
		"answered c1", "answered c2", "ended m1"}, h.calls,
		"tool-call-approval asks for a decision, tool-call-suspended for an answer; only suspended calls are answered")
}
