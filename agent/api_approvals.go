package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

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
	// ID is the agent's id for the tool call (optional, at most 200 bytes): a resend with
	// the same id, tool and arguments on the thread returns the first approval and posts
	// nothing; another tool or other arguments under it are ErrApprovalConflict.
	ID          string          `json:"id,omitempty"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Description string          `json:"description,omitempty"`
}

// ErrApprovalConflict is an Approvals answer for an id the thread used before for
// another tool or other arguments: the first approval's decision is not theirs.
var ErrApprovalConflict = errors.New("approval id already used on this thread for another call")

// SameArguments reports whether two calls' JSON arguments are the same: byte for byte
// once spacing is compacted away (a value that only decodes alike, such as a number
// beyond float precision, is another call).
func SameArguments(a, b json.RawMessage) bool {
	return bytes.Equal(compactJSON(a), compactJSON(b))
}

func compactJSON(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// Bounds of an approval request (the stored record keeps the same, whole: an id is never
// cut, which would answer one call with the decision on another sharing its prefix).
const (
	maxApprovalID          = 200
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
		if len(req.ID) > maxApprovalID {
			return server.BadRequest("id: at most %d bytes", maxApprovalID)
		}
		if err := checkID(req.ID); err != nil {
			return server.BadRequest("id: %v", err)
		}
	}
	out, created, err := a.Approvals.RequestApproval(c.Request().Context(), k, req)
	if errors.Is(err, ErrApprovalConflict) {
		return server.NewError(http.StatusConflict, "approval_id_conflict",
			"approval id %q was already used on this thread for another tool or other arguments: ask with a new id", req.ID)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, out)
}

// ErrWakeQueued is Emit's answer when waking the idle thread would pass the agent's
// max_concurrent_wakes: nothing was sent, and the caller sends again once a slot frees.
var ErrWakeQueued = errors.New("max_concurrent_wakes reached: the wake waits for a free slot")

// Emit sends a gateway-made signal to k as a default send would: into the active run,
// or waking the idle thread through the agent's wake accounting like every wake (an
// urgent one: the wake budget does not hold it back, max_concurrent_wakes does, and it
// queues by sig.CreatedAt). A signal id the thread logged already is not sent again.
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
		res, err := a.Runs.Wake(ctx, k, WakeRequest{Exempt: true, Rank: inbox.PriorityUrgent.Rank(), Since: sig.CreatedAt})
		if err != nil {
			return err
		}
		if res.Outcome != WakeOpened {
			return fmt.Errorf("wake %s: %w (until %s at the latest)", k, ErrWakeQueued, res.Until.UTC().Format(time.RFC3339))
		}
		d.Action, d.RunID = ActionWake, res.Run.ID
	} else {
		d.RunID = live.ID
	}
	if _, err := a.Deliverer.Deliver(ctx, d); err != nil && !errors.Is(err, ErrSignalLogged) {
		return err
	}
	return nil
}
