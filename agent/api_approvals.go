package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// Approvals takes approval requests from stream and webhook agents (approval.Service).
type Approvals interface {
	// RequestApproval records and posts an approval; a resend with the same id returns
	// the first (created false). The result is the approval as JSON shows it.
	RequestApproval(ctx context.Context, k inbox.ThreadKey, r ApprovalRequest) (any, bool, error)
}

// ApprovalRequest is the body of POST …/approvals.
type ApprovalRequest struct {
	// ID is the agent's id for the tool call (optional): a resend with the same id on the
	// thread returns the first approval and posts nothing.
	ID          string          `json:"id,omitempty"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Description string          `json:"description,omitempty"`
}

// Bounds of an approval request (the stored record keeps the same).
const (
	maxApprovalTool        = 200
	maxApprovalArguments   = 8 << 10
	maxApprovalDescription = 2000
)

// requestApproval asks people in Slack to approve a tool call; the decision comes back
// to the thread as an <approval> signal.
func (a *API) requestApproval(c echo.Context, k inbox.ThreadKey) error {
	if a.Approvals == nil {
		return server.NotFound("approvals are not configured (approvals.slack_connector)")
	}
	if a.agents[k.Agent].Target.Kind == TargetMastra {
		return server.BadRequest("agent %q is a mastra agent: its tools ask for approval through Mastra (requireApproval)", k.Agent)
	}
	var req ApprovalRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(req.Tool) == "":
		return server.BadRequest("tool: required (the name of the tool that needs approval)")
	case len(req.Tool) > maxApprovalTool:
		return server.BadRequest("tool: at most %d bytes", maxApprovalTool)
	case len(req.Arguments) > maxApprovalArguments:
		return server.NewError(http.StatusRequestEntityTooLarge, "payload_too_large", "arguments: at most %d bytes of JSON", maxApprovalArguments)
	case len(req.Description) > maxApprovalDescription:
		return server.BadRequest("description: at most %d bytes", maxApprovalDescription)
	}
	if req.ID != "" {
		if err := checkID(req.ID); err != nil {
			return server.BadRequest("id: %v", err)
		}
	}
	out, created, err := a.Approvals.RequestApproval(c.Request().Context(), k, req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, out)
}

// Emit sends a gateway-made signal to k as a default send would: into the active run,
// or waking the idle thread. A signal id the thread logged already is not sent again.
func (a *API) Emit(ctx context.Context, k inbox.ThreadKey, sig Signal) error {
	if sig.ID != "" {
		if _, ok, err := a.loggedSignal(ctx, k, sig.ID); err != nil || ok {
			return err
		}
	}
	live, err := a.Runs.Live(ctx, k)
	if err != nil {
		return err
	}
	sig = Accept(sig, nil, a.now().UTC())
	d := Delivery{Thread: k, Signal: sig, Action: ActionDeliver, Attempt: 1}
	if live == nil {
		run, _, err := a.Runs.Open(ctx, k, OriginWake)
		if err != nil {
			return err
		}
		d.Action, d.RunID = ActionWake, run.ID
	} else {
		d.RunID = live.ID
	}
	if _, err := a.Deliverer.Deliver(ctx, d); err != nil && !errors.Is(err, ErrSignalLogged) {
		return err
	}
	return nil
}
