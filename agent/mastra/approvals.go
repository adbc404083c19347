package mastra

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agent/httptarget"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
)

// ApprovalHook is told about a followed run's tool approvals (approval.Service).
type ApprovalHook interface {
	// ToolApproval: the run suspended on a tool that needs approval (a
	// tool-call-approval chunk; replays included).
	ToolApproval(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage)
	// ToolAnswered: a suspended call has its result.
	ToolAnswered(ctx context.Context, k inbox.ThreadKey, toolCallID string)
	// RunEnded: the Mastra run ended (finish, abort or error).
	RunEnded(ctx context.Context, k inbox.ThreadKey, runID string)
}

// WithApprovals hands the run's tool approvals to h.
func WithApprovals(h ApprovalHook) FollowerOption { return func(f *Follower) { f.approvals = h } }

// ToolApprovals answers suspended tool calls through Mastra's
// POST /api/agents/:agentId/send-tool-approval, for every mastra agent.
type ToolApprovals struct {
	agents map[string]agent.TargetConfig
	client *http.Client
	now    func() time.Time
}

var _ approval.Resumer = (*ToolApprovals)(nil)

// NewToolApprovals builds the client for the configured agents (others are skipped).
func NewToolApprovals(cfgs []agent.Config, client *http.Client) *ToolApprovals {
	t := &ToolApprovals{agents: map[string]agent.TargetConfig{}, client: client, now: time.Now}
	if t.client == nil {
		t.client = &http.Client{}
	}
	for _, c := range cfgs {
		if c = c.WithDefaults(); c.Target.Kind == agent.TargetMastra {
			t.agents[c.ID] = c.Target
		}
	}
	return t
}

// noRunWaits is in @mastra/core's error (answered with HTTP 500) for a thread with no
// run waiting on a tool call.
const noRunWaits = "could not find an active or suspended run"

// SendToolApproval approves or declines the suspended call toolCallID of k's run. A
// Mastra answer that the run waits for nothing (4xx) is approval.ErrStale.
func (t *ToolApprovals) SendToolApproval(ctx context.Context, k inbox.ThreadKey, toolCallID string, approved bool) error {
	cfg, ok := t.agents[k.Agent]
	if !ok {
		return fmt.Errorf("agent %q is not a mastra agent", k.Agent)
	}
	body, err := json.Marshal(map[string]any{"resourceId": k.Resource, "threadId": k.Thread,
		"toolCallId": toolCallID, "approved": approved})
	if err != nil {
		return err
	}
	_, _, err = httptarget.Post(ctx, t.client, agentBase(cfg)+"/send-tool-approval", secret.RevealMap(cfg.Headers), body, cfg.Timeout, t.now)
	var he *agent.DeliveryError
	if errors.As(err, &he) && (strings.Contains(he.Error(), noRunWaits) || (he.Status >= 400 && he.Status < 500 &&
		!httptarget.Retryable(he.Status) && he.Status != http.StatusUnauthorized && he.Status != http.StatusForbidden)) {
		return fmt.Errorf("%w: %w", approval.ErrStale, err)
	}
	if err != nil {
		return fmt.Errorf("send tool approval: %w", err)
	}
	return nil
}
