package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// ToolApproval records a Mastra run's suspension on a tool that needs approval (a
// `tool-call-approval` chunk) and posts it. The follower calls it for every such
// chunk, replays included: the call's first approval stands.
func (s *Service) ToolApproval(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage) {
	s.Approval(ctx, OriginMastra, k, runID, toolCallID, tool, args)
}

// Approval records a call of origin's runtime that waits for a decision (Approve or
// Decline) and posts it; replays are harmless: the call's first approval stands.
func (s *Service) Approval(ctx context.Context, origin string, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage) {
	if toolCallID == "" {
		s.Logger.Warn("approval request without a call id", "thread", k.String(), "origin", origin)
		return
	}
	a, created, err := s.Request(ctx, Request{Thread: k, Origin: origin, RunID: runID, ToolCallID: toolCallID,
		Tool: tool, Arguments: args})
	if err != nil {
		s.Logger.Error("record tool approval", "thread", k.String(), "tool_call_id", toolCallID, "error", err.Error())
		return
	}
	if created {
		s.Logger.Info("tool approval requested", "approval_id", a.ID, "thread", k.String(), "tool", a.Tool, "origin", origin)
	}
}

// ToolAnswered is told that a suspended call has its result: an approval still pending
// was answered elsewhere (Mastra's own UI, another client) and expires.
func (s *Service) ToolAnswered(ctx context.Context, k inbox.ThreadKey, toolCallID string) {
	if toolCallID == "" {
		return
	}
	s.expireRun(ctx, k, "", toolCallID, "the call was answered elsewhere")
}

// RunEnded is told that a Mastra run ended: its approvals still pending expire.
func (s *Service) RunEnded(ctx context.Context, k inbox.ThreadKey, runID string) {
	s.expireRun(ctx, k, runID, "", "the run ended")
}

func (s *Service) expireRun(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, why string) {
	as, err := s.Store.ExpireRunApprovals(ctx, k, runID, toolCallID, s.Now().UTC())
	if err != nil {
		s.Logger.Error("expire approvals", "thread", k.String(), "error", err.Error())
		return
	}
	for _, a := range as {
		s.expired(ctx, a, why)
	}
}

// Sweep expires pending approvals past their expiry, a batch at a time.
func (s *Service) Sweep(ctx context.Context) error {
	for {
		as, err := s.Store.ExpireApprovals(ctx, s.Now().UTC(), sweepBatch)
		if err != nil {
			return err
		}
		for _, a := range as {
			s.expired(ctx, a, "nobody decided within approvals.expire_after")
		}
		if len(as) < sweepBatch {
			return nil
		}
	}
}

const sweepBatch = 100

// Redelivery of decisions whose signal did not reach their thread: one whose change is
// younger than redeliverGrace may still be on its way (a click's delivery takes up to
// resumeTimeout).
const redeliverGrace = 2 * resumeTimeout

// DeliverFor bounds how long a decision's signal is sent again: one that has not
// reached its thread DeliverFor after it was made is given up and no longer holds a
// place in its agent's wake queue, so a decision nobody sends cannot stall the queue.
const DeliverFor = 24 * time.Hour

// Redeliver sends the signals of API approvals decided or expired that their threads
// have not logged: the fallback for decisions whose wake waited for a
// max_concurrent_wakes slot when no closing run was seen to free one (WakeSlotFreed),
// and for deliveries a stopped replica left undone. One still waiting stays for the
// next call; the sweep calls it every sweepEvery.
func (s *Service) Redeliver(ctx context.Context) error {
	now := s.Now().UTC()
	since := now.Add(-DeliverFor)
	as, err := s.Store.UndeliveredApprovals(ctx, since.Add(-s.cfg.ExpireAfter), since, now.Add(-redeliverGrace), sweepBatch)
	if err != nil {
		return err
	}
	for _, a := range as {
		s.resend(ctx, a)
	}
	return nil
}

// resend sends a's signal again and reports false when its wake still waits for a slot.
func (s *Service) resend(ctx context.Context, a Approval) bool {
	ectx, cancel := context.WithTimeout(ctx, resumeTimeout)
	err := s.Emitter.Emit(ectx, a.ThreadKey, Signal(a))
	cancel()
	switch {
	case errors.Is(err, agent.ErrWakeQueued):
		s.Logger.Debug("approval signal still waits for a wake slot", "approval_id", a.ID)
		return false
	case err != nil:
		s.Logger.Warn("redeliver approval signal", "approval_id", a.ID, "error", err.Error())
	default:
		s.Logger.Info("approval signal delivered", "approval_id", a.ID, "status", string(a.Status))
	}
	return true
}

// Name names the service in logs.
func (s *Service) Name() string { return "approvals" }

// Start runs the expiry sweep, the click worker (see Later) and the sender of decisions
// whose wake slot freed (see WakeSlotFreed) until Stop.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	clicks := make(chan laterJob, clickQueue)
	err := s.StartStop.Start(ctx, s.sweepLoop, s.slotLoop, func(ctx context.Context) { s.decideClicks(ctx, clicks) })
	if err != nil {
		return fmt.Errorf("approvals: %w", err)
	}
	s.clicks = clicks
	return nil
}

// sweepLoop expires overdue approvals and redelivers decisions every sweepEvery until
// ctx ends.
func (s *Service) sweepLoop(ctx context.Context) {
	loop := service.Loop[struct{}]{
		Base: s.Base,
		Pass: func(ctx context.Context) (struct{}, bool, error) {
			// Each step is logged on its own, and a failed one does not keep the other.
			err := s.Sweep(ctx)
			if err != nil && ctx.Err() == nil {
				s.Logger.Warn("expire approvals", "error", err.Error())
			}
			rerr := s.Redeliver(ctx)
			if rerr != nil && ctx.Err() == nil {
				s.Logger.Warn("redeliver approval signals", "error", rerr.Error())
			}
			return struct{}{}, false, errors.Join(err, rerr)
		},
		Interval:  s.sweepEvery,
		WaitFirst: true,
	}
	loop.Run(ctx)
}

// Stop ends the sweep and the click worker (after the click in progress) and waits for
// them, or for ctx. Clicks still queued are dropped: nothing was decided, and the buttons
// still work.
func (s *Service) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.clicks = nil
	s.mu.Unlock()
	return s.StartStop.Stop(ctx)
}

// RequestApproval takes an agent API request (POST …/approvals) of a stream or webhook
// agent: the decision comes back to the thread as an <approval> signal.
func (s *Service) RequestApproval(ctx context.Context, k inbox.ThreadKey, r agent.ApprovalRequest) (any, bool, error) {
	a, created, err := s.Request(ctx, Request{Thread: k, Origin: OriginAPI, ToolCallID: r.ID, Tool: r.Tool,
		Arguments: r.Arguments, Description: r.Description})
	if err != nil {
		return nil, false, err
	}
	return a, created, nil
}

var _ agent.Approvals = (*Service)(nil)
