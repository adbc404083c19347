package approval

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/signalgate/signalgate/inbox"
)

// Relay carries what followed runtimes report about tool approvals and questions (Mastra
// runs, LangGraph interrupts, A2A tasks waiting for input) to the Service.
// The followers are built before the Service (their deliveries go through the dispatcher
// that the Service's decisions are sent by), so they are given the Relay, and the
// Service subscribes to it when it is built; nothing reports before the gateway starts.
type Relay struct {
	mu sync.RWMutex
	to *Service
}

// NewRelay returns a Relay no Service listens to yet.
func NewRelay() *Relay { return &Relay{} }

func (r *Relay) subscribe(s *Service) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.to = s
}

func (r *Relay) service() *Service {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.to
}

// ToolApproval relays Service.ToolApproval.
func (r *Relay) ToolApproval(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage) {
	if s := r.service(); s != nil {
		s.ToolApproval(ctx, k, runID, toolCallID, tool, args)
	}
}

// Approval relays Service.Approval.
func (r *Relay) Approval(ctx context.Context, origin string, k inbox.ThreadKey, runID, toolCallID, tool string, args json.RawMessage) {
	if s := r.service(); s != nil {
		s.Approval(ctx, origin, k, runID, toolCallID, tool, args)
	}
}

// ToolSuspended relays Service.ToolSuspended.
func (r *Relay) ToolSuspended(ctx context.Context, k inbox.ThreadKey, runID, toolCallID, tool string, suspendPayload json.RawMessage) {
	if s := r.service(); s != nil {
		s.ToolSuspended(ctx, k, runID, toolCallID, tool, suspendPayload)
	}
}

// Question relays Service.Question.
func (r *Relay) Question(ctx context.Context, origin string, k inbox.ThreadKey, runID, callID, tool string, payload json.RawMessage) {
	if s := r.service(); s != nil {
		s.Question(ctx, origin, k, runID, callID, tool, payload)
	}
}

// ToolAnswered relays Service.ToolAnswered.
func (r *Relay) ToolAnswered(ctx context.Context, k inbox.ThreadKey, toolCallID string) {
	if s := r.service(); s != nil {
		s.ToolAnswered(ctx, k, toolCallID)
	}
}

// RunEnded relays Service.RunEnded.
func (r *Relay) RunEnded(ctx context.Context, k inbox.ThreadKey, runID string) {
	if s := r.service(); s != nil {
		s.RunEnded(ctx, k, runID)
	}
}

// Reconcile relays Service.Reconcile; with no Service listening there is nothing to match.
func (r *Relay) Reconcile(ctx context.Context, agentID string, calls []SuspendedCall) error {
	if s := r.service(); s != nil {
		return s.Reconcile(ctx, agentID, calls)
	}
	return nil
}
