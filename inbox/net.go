package inbox

import (
	"fmt"
	"time"
)

// NetLane is what a thread knows of one net-state lane (its records with one netKey)
// when a notification of that lane arrives.
type NetLane struct {
	// Pending are the lane's pending records (normally at most one).
	Pending []Record
	// Told is the state the model was last told in this lane; HasTold is false when
	// it was told nothing (or its last told state was the lane's rest state).
	Told    string
	HasTold bool
}

// NetDecision is the net-state verdict for a notification with a netKey.
type NetDecision struct {
	NetKey    string `json:"netKey"`
	State     string `json:"state,omitempty"`
	RestState string `json:"restState,omitempty"`
	// Told is the state the model was last told in the lane ("" and HasTold false:
	// nothing, so the state is compared with RestState).
	Told    string `json:"told,omitempty"`
	HasTold bool   `json:"hasTold"`
	// Supersedes lists the pending records of the lane the new record replaces.
	Supersedes []string `json:"supersedes,omitempty"`
	// CoalescedCount is the new record's count: its own plus what it supersedes.
	CoalescedCount int `json:"coalescedCount"`
	// Unchanged: the state is what the model already knows, so the new record is
	// superseded on arrival and reaches nothing.
	Unchanged bool   `json:"unchanged"`
	Reason    string `json:"reason"`
}

// DecideNet applies the net-state rules to n (which has a netKey) in its lane:
//
//   - n supersedes every pending record of the lane; it carries their count on;
//   - when n's state equals the state the model was last told — or, with nothing
//     told, the lane's rest state — n itself is superseded and nothing reaches the
//     model: the lane's net state did not change.
//
// So a failure still pending when a success arrives is never delivered, nor is the
// success; a failure already delivered makes the success a delivered recovery.
func DecideNet(n Notification, lane NetLane) NetDecision {
	d := NetDecision{NetKey: n.NetKey, State: n.State, RestState: n.RestState, Told: lane.Told, HasTold: lane.HasTold,
		CoalescedCount: 1}
	for _, r := range lane.Pending {
		d.Supersedes = append(d.Supersedes, r.ID)
		d.CoalescedCount += max(r.CoalescedCount, 1)
	}
	base, against := n.RestState, "rest state"
	if lane.HasTold {
		base, against = lane.Told, "last told"
	}
	switch {
	case n.State == "":
		d.Reason = "net state not given: the newest record of the lane stands"
	case base != "" && n.State == base:
		d.Unchanged = true
		d.Reason = "net state unchanged: " + n.State
	case base == "":
		d.Reason = fmt.Sprintf("net state new: %s", n.State)
	default:
		d.Reason = fmt.Sprintf("net state changed: %s (%s) → %s", base, against, n.State)
	}
	return d
}

// ApplyNet gives a new record its lane's verdict: the carried count, and when the
// state is unchanged the terminal status superseded with the verdict's reason. The
// policy's schedule stays on the record (without a due time): should the lane's told
// state change after all, the store brings it back to pending as decided.
func (r *Record) ApplyNet(d NetDecision) {
	r.CoalescedCount = d.CoalescedCount
	if d.Unchanged {
		r.Status = StatusSuperseded
		r.Reason = d.Reason
	}
}

// Supersede ends a pending record of a lane replaced by the newer record by (whose
// state is state).
func (r *Record) Supersede(by, state string, now time.Time) {
	r.Status = StatusSuperseded
	r.SupersededBy = by
	r.Reason = "superseded by " + by
	if state != "" {
		r.Reason += " (net state now " + state + ")"
	}
	r.UpdatedAt = now
}
