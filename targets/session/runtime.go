package session

import (
	"context"
	"fmt"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
)

var (
	_ agent.ThreadAborter = (*Hosted)(nil)
	_ approval.Resumer    = (*Hosted)(nil)
	_ agent.RuntimeRuns   = (*Hosted)(nil)
)

// sessionOf is k's session id; ok is false when the thread has none.
func (h *Hosted) sessionOf(ctx context.Context, k inbox.ThreadKey) (string, bool, error) {
	ts, ok, err := h.sessions.TargetSession(ctx, k)
	return ts.ID, ok, err
}

// SendToolApproval answers action callID of k's session through the session's events.
// A session no longer waiting on it is approval.ErrStale.
func (h *Hosted) SendToolApproval(ctx context.Context, k inbox.ThreadKey, callID string, approved bool) error {
	id, ok, err := h.sessionOf(ctx, k)
	if err != nil {
		return fmt.Errorf("answer %s: %w", callID, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s has no session", approval.ErrStale, k)
	}
	snap, err := h.api.Read(ctx, id)
	if err != nil {
		return fmt.Errorf("answer %s: read session %s: %w", callID, id, err)
	}
	waits := false
	for _, a := range snap.Actions {
		waits = waits || (a.ID == callID && a.Unanswerable == "")
	}
	if snap.State != Waiting || !waits {
		return fmt.Errorf("%w: session %s does not wait on %s (status %q)", approval.ErrStale, id, callID, snap.Status)
	}
	if err := h.api.Answer(ctx, id, callID, approved); err != nil {
		return fmt.Errorf("answer %s in session %s: %w", callID, id, err)
	}
	return nil
}

// Answer refuses: a session's actions are approved or declined, not answered in words.
func (h *Hosted) Answer(_ context.Context, k inbox.ThreadKey, callID string, _ any) error {
	return fmt.Errorf("%w: action %s of %s is approved or declined, not answered", approval.ErrStale, callID, k)
}

// AbortThread interrupts the turn k's session runs (clearPendingSignals changes
// nothing: the session queues no signals of its own).
func (h *Hosted) AbortThread(ctx context.Context, k inbox.ThreadKey, _ bool) error {
	id, ok, err := h.sessionOf(ctx, k)
	if err != nil || !ok {
		return err
	}
	if err := h.api.Interrupt(ctx, id); err != nil {
		return fmt.Errorf("interrupt session %s of %s: %w", id, k, err)
	}
	return nil
}

// RuntimeRun is what the runtime says of k's session now, for the console.
func (h *Hosted) RuntimeRun(ctx context.Context, k inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	out := agent.RuntimeRun{Kind: h.kind, Unit: "session"}
	id, ok, err := h.sessionOf(ctx, k)
	if err != nil {
		return out, true, err
	}
	if !ok {
		out.Status = "not created"
		return out, true, nil
	}
	out.Thread = id
	snap, err := h.api.Read(ctx, id)
	if err != nil {
		return out, true, err
	}
	out.Status = snap.Status
	for _, a := range snap.Actions {
		out.Waiting = append(out.Waiting, a.ID)
	}
	return out, true, nil
}
