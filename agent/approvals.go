package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
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

// RequestApproval asks people in Slack to approve a tool call; the decision comes back
// to the thread as an <approval> signal. The result is the approval as JSON shows it,
// created false for a resend.
func (s *Service) RequestApproval(ctx context.Context, k inbox.ThreadKey, req ApprovalRequest) (any, bool, error) {
	if err := s.ApprovalsFor(k); err != nil {
		return nil, false, err
	}
	if err := req.check(); err != nil {
		return nil, false, err
	}
	out, created, err := s.Approvals.RequestApproval(ctx, k, req)
	if errors.Is(err, ErrApprovalConflict) {
		return nil, false, NewError(KindConflict, "approval_id_conflict",
			"approval id %q was already used on this thread for another tool or other arguments: ask with a new id", req.ID)
	}
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// ApprovalsFor says whether thread k's agent may ask for approvals here: not when
// approvals are not configured, nor for an agent whose runtime reports its runs (it asks
// for approvals itself, and the gateway relays them).
func (s *Service) ApprovalsFor(k inbox.ThreadKey) error {
	if s.Approvals == nil {
		return notFoundf("approvals are not configured (approvals.slack_connector)")
	}
	if t := s.agents[k.Agent].Target; t.Presence == PresenceRuntime {
		return invalidf("agent %q is a %s agent: its tools ask for approval through its runtime (the gateway relays those to Slack)", k.Agent, t.Kind)
	}
	return nil
}

// check applies the request's bounds.
func (req ApprovalRequest) check() error {
	switch {
	case strings.TrimSpace(req.Tool) == "":
		return invalidf("tool: required (the name of the tool that needs approval)")
	case len(req.Tool) > maxApprovalTool:
		return invalidf("tool: at most %d bytes", maxApprovalTool)
	case len(req.Arguments) > maxApprovalArguments:
		return tooLargef("arguments: at most %d bytes of JSON", maxApprovalArguments)
	case len(req.Description) > maxApprovalDescription:
		return invalidf("description: at most %d bytes", maxApprovalDescription)
	}
	if req.ID != "" {
		if len(req.ID) > maxApprovalID {
			return invalidf("id: at most %d bytes", maxApprovalID)
		}
		if err := checkID(req.ID); err != nil {
			return invalidf("id: %v", err)
		}
	}
	return nil
}

// ErrWakeQueued is Emit's answer when waking the idle thread would pass the agent's
// max_concurrent_wakes: nothing was sent, and the caller sends again once a slot frees.
var ErrWakeQueued = errors.New("max_concurrent_wakes reached: the wake waits for a free slot")

// Emit sends a gateway-made signal to k (the Service's own Emitter).
func (s *Service) Emit(ctx context.Context, k inbox.ThreadKey, sig Signal) error {
	return NewEmitter(s.Frames, s.Runs, s.Deliverer, s.now).Emit(ctx, k, sig)
}

// Emitter sends gateway-made signals (approval decisions) to threads. It stands apart
// from Service so the approvals service, which the Service asks, can be built with it
// before the Service exists.
type Emitter struct {
	frames    FrameReader
	runs      *Runs
	deliverer Deliverer
	now       func() time.Time
}

// NewEmitter builds an Emitter on the thread logs, presence and the dispatcher.
func NewEmitter(frames FrameReader, runs *Runs, d Deliverer, now func() time.Time) *Emitter {
	if now == nil {
		now = time.Now
	}
	return &Emitter{frames: frames, runs: runs, deliverer: d, now: now}
}

// Emit sends sig to k as a default send would: into the active run, or waking the idle
// thread through the agent's wake accounting like every wake (an urgent one: the wake
// budget does not hold it back, max_concurrent_wakes does, and it queues by
// sig.CreatedAt). A signal id the thread logged already is not sent again.
func (e *Emitter) Emit(ctx context.Context, k inbox.ThreadKey, sig Signal) error {
	if sig.ID != "" {
		if _, ok, err := loggedSignal(ctx, e.frames, k, sig.ID); err != nil || ok {
			return err
		}
	}
	live, err := e.runs.Live(ctx, k)
	if err != nil {
		return err
	}
	sig = Accept(sig, nil, e.now().UTC())
	d := Handoff{Thread: k, Signal: sig, Behavior: BehaviorDeliver, Attempt: 1}
	if live == nil {
		res, err := e.runs.Wake(ctx, k, WakeRequest{Exempt: true, Rank: inbox.PriorityUrgent.Rank(), Since: sig.CreatedAt})
		if err != nil {
			return err
		}
		if res.Outcome != WakeOpened {
			return fmt.Errorf("wake %s: %w (until %s at the latest)", k, ErrWakeQueued, res.Until.UTC().Format(time.RFC3339))
		}
		d.Behavior, d.RunID = BehaviorWake, res.Run.ID
	} else {
		d.RunID = live.ID
	}
	if _, err := e.deliverer.Deliver(ctx, d); err != nil && !errors.Is(err, ErrSignalLogged) {
		return err
	}
	return nil
}
