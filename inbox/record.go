package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// NewRecord builds the pending record for n under decision d.
func NewRecord(id, eventID string, n Notification, d Decision, now time.Time) Record {
	r := Record{
		ID:             id,
		Thread:         n.Thread,
		EventID:        eventID,
		Route:          n.Route,
		Source:         n.Source,
		SourceID:       n.SourceID,
		Kind:           n.Kind,
		Priority:       n.Priority,
		Summary:        n.Summary,
		Payload:        n.Payload,
		DedupeKey:      n.DedupeKey,
		CoalesceKey:    n.CoalesceKey,
		Attributes:     n.Attributes.Clone(),
		Metadata:       maps.Clone(n.Metadata),
		DeliverAs:      n.DeliverAs,
		NetKey:         n.NetKey,
		State:          n.State,
		RestState:      n.RestState,
		StreamOptions:  maps.Clone(n.StreamOptions),
		Status:         StatusPending,
		CoalescedCount: 1,
		CreatedAt:      now,
		UpdatedAt:      now,
	}
	if r.Priority == "" {
		r.Priority = PriorityMedium
	}
	if r.Attributes == nil {
		r.Attributes = Attributes{}
	}
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.apply(d)
	if d.Action == ActionDiscard {
		r.Status = StatusDiscarded
		r.DiscardedAt = &now
	}
	return r
}

// Mergeable reports whether a pending or snoozed record absorbs n: same thread, source and kind,
// and an equal non-empty dedupeKey or coalesceKey.
//
// Records of net-state lanes never merge: a newer record of a lane supersedes the
// pending one instead (see DecideNet), and a record without a netKey stays out of lanes.
func (r *Record) Mergeable(n Notification) bool {
	if (r.Status != StatusPending && r.Status != StatusSnoozed) || r.Thread != n.Thread || r.Source != n.Source || r.Kind != n.Kind ||
		r.NetKey != "" || n.NetKey != "" {
		return false
	}
	return (n.DedupeKey != "" && r.DedupeKey == n.DedupeKey) ||
		(n.CoalesceKey != "" && r.CoalesceKey == n.CoalesceKey)
}

// Merge folds n into r: the summary is replaced (payload, priority and stream options
// too when given), attributes and metadata merge with the new values winning, the count
// goes up, and the record keeps the stronger of its outcome and the fresh decision d (see
// Action.Strength), and the earlier of each due time. A merge never discards: the
// record it merges into is pending, so its details are still owed to the agent.
func (r *Record) Merge(n Notification, d Decision, now time.Time) {
	r.Summary = n.Summary
	if len(n.Payload) > 0 {
		r.Payload = n.Payload
	}
	if n.Priority != "" {
		r.Priority = n.Priority
	}
	if n.StreamOptions != nil {
		r.StreamOptions = maps.Clone(n.StreamOptions)
	}
	if n.SourceID != "" {
		r.SourceID = n.SourceID
	}
	r.Attributes = r.Attributes.Merge(n.Attributes)
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	maps.Copy(r.Metadata, n.Metadata)
	r.CoalescedCount++
	r.UpdatedAt = now
	if r.Status == StatusSnoozed {
		r.mergeSnoozed(n, d)
		return
	}
	prev := *r
	r.apply(d)
	if d.Action.Strength() < prev.Action.Strength() {
		r.Action, r.Reason = prev.Action, prev.Reason
	}
	if d.Hold != nil {
		// Held now: an earlier due time of the record must not send it past the hold,
		// and the reason says what holds it.
		r.Reason = d.Reason
		return
	}
	r.DeliverAt = earlier(prev.DeliverAt, r.DeliverAt)
	r.SummaryAt = earlier(prev.SummaryAt, r.SummaryAt)
}

// mergeSnoozed ends with what a merge into a snoozed record decides: it stays hidden
// until its time (the agent asked not to hear of this thing before then, and a
// duplicate or an update must not slip past that as a new record), unless n itself is
// urgent, which ends the snooze at once with the fresh decision, as if it had just
// arrived (urgent passes a snooze as it passes a silence).
func (r *Record) mergeSnoozed(n Notification, d Decision) {
	if n.Priority != PriorityUrgent {
		return
	}
	r.Status, r.SnoozedUntil = StatusPending, nil
	r.apply(d)
	r.Reason = "snooze ended by an urgent update; " + d.Reason
}

func (r *Record) apply(d Decision) {
	r.Action = d.Action
	r.Reason = d.Reason
	r.DeliverAt = d.DeliverAt
	r.SummaryAt = d.SummaryAt
	r.FullWhenIdle = r.FullWhenIdle || d.FullWhenIdle
	r.HeldBy, r.HeldUntil = "", nil
	if d.Hold != nil {
		// Nothing is owed until the hold ends, not even at the thread's idle turn: the
		// release decides the record again.
		r.DeliverAt, r.SummaryAt, r.FullWhenIdle = nil, nil, false
		r.HeldBy, r.HeldUntil = d.Hold.By, ptr(d.Hold.Until)
	}
}

// Subject is what the policy sees of a record decided again (a snooze ending), as of
// its notification's: the payload is the caller's to add.
func (r *Record) Subject() Subject {
	return Subject{Source: r.Source, Kind: r.Kind, Priority: r.Priority, Route: r.Route, Attributes: r.Attributes, DeliverAs: r.DeliverAs,
		Metadata: r.Metadata, Thread: r.Thread}
}

// Subject is what the policy sees of a notification.
func (n *Notification) Subject() Subject {
	return Subject{Source: n.Source, Kind: n.Kind, Priority: n.Priority, Route: n.Route, Attributes: n.Attributes, DeliverAs: n.DeliverAs,
		Metadata: n.Metadata, Thread: n.Thread}
}

func earlier(a, b *time.Time) *time.Time {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Before(*b):
		return a
	}
	return b
}

// MarshalJSON writes the record with Mastra's flat field names beside the gateway's:
// agentId, resourceId and threadId beside thread, deliveryAttempts beside attempts and
// lastDeliveryError beside lastError.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record // no MarshalJSON: no recursion
	return json.Marshal(struct {
		plain
		AgentID           string `json:"agentId"`
		ResourceID        string `json:"resourceId"`
		ThreadID          string `json:"threadId"`
		DeliveryAttempts  int    `json:"deliveryAttempts"`
		LastDeliveryError string `json:"lastDeliveryError,omitempty"`
		TraceID           string `json:"traceId,omitempty"`
	}{plain(r), r.Thread.Agent, r.Thread.Resource, r.Thread.Thread, r.Attempts, r.LastError, r.TraceID()})
}

// JSONWith writes the record followed by the fields of extra (a struct or map that
// renders as a non-empty JSON object): for types that embed a Record, whose own fields
// its MarshalJSON would otherwise hide.
func (r Record) JSONWith(extra any) ([]byte, error) {
	base, err := r.MarshalJSON()
	if err != nil {
		return nil, err
	}
	more, err := json.Marshal(extra)
	if err != nil {
		return nil, err
	}
	more = bytes.TrimSpace(more)
	if len(more) < 2 || more[0] != '{' {
		return nil, fmt.Errorf("encode record: extra fields render as %.20s, not an object", more)
	}
	if string(more) == "{}" {
		return base, nil
	}
	out := append(base[:len(base)-1:len(base)-1], ',')
	return append(out, more[1:]...), nil
}
