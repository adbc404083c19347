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
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// ApprovalHook is told about a followed run's tool approvals (approval.Service).
type ApprovalHook interface {
	// ToolApproval: the run suspended on a tool that needs approval (a
	// tool-call-approval chunk; replays included).
	ToolApproval(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage)
	// ToolSuspended: the run suspended on a tool that waits for an answer (a
	// tool-call-suspended chunk, e.g. ask_user; replays included).
	ToolSuspended(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, suspendPayload json.RawMessage)
	// ToolAnswered: a suspended call has its result.
	ToolAnswered(ctx context.Context, k inbox.ThreadKey, toolCallID string)
	// RunEnded: the Mastra run ended (finish, abort or error).
	RunEnded(ctx context.Context, k inbox.ThreadKey, runID string)
	// Reconcile: the agent's suspended calls as Mastra lists them (on start and after a
	// stream reconnects), so approvals missed or ended while away are set right.
	Reconcile(ctx context.Context, agentID string, calls []approval.SuspendedCall) error
}

// WithApprovals hands the run's tool approvals to h.
func WithApprovals(h ApprovalHook) FollowerOption { return func(f *Follower) { f.approvals = h } }

// ToolApprovals answers suspended tool calls through Mastra's
// POST /api/agents/:agentId/send-tool-approval, for every mastra agent.
type ToolApprovals struct{ *Client }

var _ approval.Resumer = (*ToolApprovals)(nil)

// NewToolApprovals builds the client for the configured agents (others are skipped).
func NewToolApprovals(cfgs []agent.Config, client *http.Client) *ToolApprovals {
	return &ToolApprovals{NewClient(cfgs, client)}
}

// noRunWaits is in @mastra/core's error (answered with HTTP 500) for a thread with no
// run waiting on a tool call.
const noRunWaits = "could not find an active or suspended run"

// SendToolApproval approves or declines the suspended call toolCallID of k's run. A
// Mastra answer that the run waits for nothing (4xx) is approval.ErrStale.
func (t *ToolApprovals) SendToolApproval(ctx context.Context, k inbox.ThreadKey, toolCallID string, approved bool) error {
	return t.resume(ctx, k, map[string]any{"resourceId": k.Resource, "threadId": k.Thread,
		"toolCallId": toolCallID, "approved": approved})
}

// Answer resumes the call toolCallID that suspended for an answer (ask_user) with
// resumeData, through the same route.
func (t *ToolApprovals) Answer(ctx context.Context, k inbox.ThreadKey, toolCallID string, resumeData any) error {
	return t.resume(ctx, k, map[string]any{"resourceId": k.Resource, "threadId": k.Thread,
		"toolCallId": toolCallID, "approved": true, "resumeData": resumeData})
}

func (t *ToolApprovals) resume(ctx context.Context, k inbox.ThreadKey, body map[string]any) error {
	_, err := t.post(ctx, k.Agent, "/send-tool-approval", body)
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

// reconcile hands the agent's suspended calls, as Mastra lists them, to the approvals.
// Concurrent calls (many streams reconnecting at once) coalesce into the running one.
func (f *Follower) reconcile(ctx context.Context) {
	if f.approvals == nil || !f.reconciling.CompareAndSwap(false, true) {
		return
	}
	defer f.reconciling.Store(false)
	c := &Client{agents: map[string]server{f.id: f.cfg}, client: f.client, now: time.Now}
	runs, err := c.SuspendedRuns(ctx, f.id)
	if err != nil {
		f.log.Warn("list Mastra's suspended runs to reconcile approvals", "error", err.Error())
		return
	}
	var calls []approval.SuspendedCall
	for _, r := range runs {
		k := inbox.ThreadKey{Agent: f.id, Resource: r.ResourceID, Thread: r.ThreadID}
		for _, c := range r.ToolCalls {
			calls = append(calls, approval.SuspendedCall{Thread: k, RunID: r.RunID, ToolCallID: c.ToolCallID,
				Tool: c.ToolName, Args: c.Args, RequiresApproval: c.RequiresApproval, SuspendPayload: c.SuspendPayload})
		}
	}
	if err := f.approvals.Reconcile(ctx, f.id, calls); err != nil {
		f.log.Warn("reconcile approvals with Mastra's suspended runs", "error", err.Error())
		return
	}
	f.TestSignals.Reconciled.Signal(len(calls))
}
