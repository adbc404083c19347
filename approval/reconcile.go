package approval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/signalgate/signalgate/inbox"
)

// SuspendedCall is a tool call a Mastra run waits on, as Mastra's
// GET /agents/:agentId/suspended-runs lists it.
type SuspendedCall struct {
	Thread           inbox.ThreadKey
	RunID            string
	ToolCallID       string
	Tool             string
	Args             json.RawMessage
	RequiresApproval bool
	// SuspendPayload is what a call that suspended for an answer asked (ask_user's
	// question); empty for approvals.
	SuspendPayload json.RawMessage
}

// reconcilePage bounds the pending approvals read per page while reconciling.
const reconcilePage = 200

// Reconcile matches agentID's pending Mastra approvals with the calls its Mastra server
// says are suspended (all of them: the caller lists every page), so approvals survive a
// restart or a lost stream: a pending approval or question whose call is no longer
// suspended (its run ended or was answered while nobody watched) expires; a suspended
// call that needs approval and has none gets one, and one that suspended for an answer
// (ask_user) gets a question, each posted like any other.
func (s *Service) Reconcile(ctx context.Context, agentID string, calls []SuspendedCall) error {
	suspended := map[string]bool{}
	for _, c := range calls {
		if c.Thread.Agent != agentID || c.ToolCallID == "" {
			continue
		}
		suspended[c.Thread.String()+"\x00"+c.ToolCallID] = true
		// The call's first record stands: an existing one is returned as it is.
		if c.RequiresApproval {
			s.ToolApproval(ctx, c.Thread, c.RunID, c.ToolCallID, c.Tool, c.Args)
		} else {
			s.ToolSuspended(ctx, c.Thread, c.RunID, c.ToolCallID, c.Tool, c.SuspendPayload)
		}
	}
	var stale []Approval
	f := Filter{Agent: agentID, Status: []Status{StatusPending}, Limit: reconcilePage}
	for {
		page, next, err := s.Store.ListApprovals(ctx, f)
		if err != nil {
			return fmt.Errorf("list pending approvals of %s: %w", agentID, err)
		}
		for _, a := range page {
			if a.Origin == OriginMastra && !suspended[a.ThreadKey.String()+"\x00"+a.ToolCallID] {
				stale = append(stale, a)
			}
		}
		if next == "" || len(page) == 0 {
			break
		}
		f.Cursor = next
	}
	// Expired after the listing, so the paging is not disturbed by what it changes.
	for _, a := range stale {
		s.expireRun(ctx, a.ThreadKey, "", a.ToolCallID, "Mastra no longer waits on the call (its run ended or the call was answered)")
	}
	return nil
}
