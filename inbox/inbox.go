// Package inbox is the durable notification inbox: events, records, dedupe and
// coalesce, and the delivery policy. It knows nothing of HTTP or agent targets.
package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/condition"
)

// Priority orders records: urgent before high before medium before low.
type Priority string

// Priorities, lowest first.
const (
	PriorityLow    Priority = "low"
	PriorityMedium Priority = "medium"
	PriorityHigh   Priority = "high"
	PriorityUrgent Priority = "urgent"
)

// Rank is 0 for low up to 3 for urgent, and -1 for an unknown priority.
func (p Priority) Rank() int {
	switch p {
	case PriorityLow:
		return 0
	case PriorityMedium:
		return 1
	case PriorityHigh:
		return 2
	case PriorityUrgent:
		return 3
	}
	return -1
}

// Valid reports whether p is one of the four priorities.
func (p Priority) Valid() bool { return p.Rank() >= 0 }

// ParsePriority accepts the four names; "" means medium.
func ParsePriority(s string) (Priority, error) {
	if s == "" {
		return PriorityMedium, nil
	}
	p := Priority(s)
	if !p.Valid() {
		return "", fmt.Errorf("unknown priority %q (want low, medium, high or urgent)", s)
	}
	return p, nil
}

// Status is a record's place in its lifecycle.
type Status string

// Record statuses. Only pending records absorb duplicates or are dispatched.
const (
	StatusPending   Status = "pending"
	StatusDelivered Status = "delivered"
	StatusSeen      Status = "seen"
	StatusDismissed Status = "dismissed"
	StatusArchived  Status = "archived"
	StatusDiscarded Status = "discarded"
	StatusFailed    Status = "failed"
	// StatusSuperseded ends a record of a net-state lane that a newer record of the
	// same lane replaced while it was pending, or that arrived with the state the
	// model was last told (see DecideNet). It is kept, and listed, like every other.
	StatusSuperseded Status = "superseded"
	// StatusSnoozed hides a pending record until its SnoozedUntil (see Snooze): it is
	// not delivered, summarised or counted as backlog, and is decided again then.
	StatusSnoozed Status = "snoozed"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusDelivered, StatusSeen, StatusDismissed, StatusArchived, StatusDiscarded, StatusFailed,
		StatusSuperseded, StatusSnoozed:
		return true
	}
	return false
}

// Terminal reports whether retention may delete a record in this status: a snoozed
// record is still owed to the agent.
func (s Status) Terminal() bool { return s != StatusPending && s != StatusSnoozed && s.Valid() }

// Presence is a thread's state: active while a run is open.
type Presence string

// Presence values.
const (
	PresenceIdle   Presence = "idle"
	PresenceActive Presence = "active"
)

// ThreadKey names one conversation of one agent.
type ThreadKey struct {
	Agent    string `json:"agent"`
	Resource string `json:"resourceId"`
	Thread   string `json:"threadId"`
}

func (k ThreadKey) String() string { return k.Agent + "/" + k.Resource + "/" + k.Thread }

// Delivery modes a route or the agent API may ask for instead of a notification.
const (
	DeliverAsNotification = ""
	DeliverAsMessage      = "message"
	DeliverAsQueued       = "queued-message"
)

// Event is one verified inbound occurrence, stored raw before anything is acknowledged.
type Event struct {
	ID         string            `json:"id"`
	Source     string            `json:"source"`
	Connector  string            `json:"connector"`
	DeliveryID string            `json:"deliveryId,omitempty"` // provider's id: X-GitHub-Delivery, event_id, Message-ID…
	Type       string            `json:"type"`                 // provider event type, e.g. "pull_request"
	Headers    map[string]string `json:"headers,omitempty"`    // only the headers that matter; never secrets
	Body       []byte            `json:"-"`
	ReceivedAt time.Time         `json:"receivedAt"`
	Status     EventStatus       `json:"status"`
	Error      string            `json:"error,omitempty"` // why the event could not be parsed or routed
	ReplayOf   string            `json:"replayOf,omitempty"`
	Records    int               `json:"records"` // records created or merged from it
	// Redeliveries counts later deliveries of the same provider id (acknowledged, ignored).
	Redeliveries int `json:"redeliveries"`
	// BodyDigest, when set (Digest of the signed body), makes a later event of the same
	// connector with the same digest a redelivery whatever its delivery id: a signed
	// body without a timestamp could otherwise be replayed as new. It lives as long as
	// the event, so retention bounds it.
	BodyDigest string `json:"-"`
	// Checkpoint, when set, is saved in the same transaction as the event, even when
	// the event is a duplicate: a connector's cursor (an IMAP mailbox's last UID)
	// advances exactly when its events are committed.
	Checkpoint *Checkpoint `json:"-"`
	// TraceParent is the W3C traceparent of the span that stored the event (empty when
	// tracing is off): the records it makes or merges into keep it, so their delivery
	// stays in, or links to, the event's trace.
	TraceParent string `json:"-"`

	// exprPayload is `payload` for expressions once read (ExprPayload); never stored.
	exprPayload     any
	exprPayloadRead bool
}

// ExprPayload is the event as `when` expressions read `payload`: what its connector
// set (SetExprPayload), else its body decoded as JSON (nil when it is not JSON). It
// is decoded once, however many routes, rules and silences read it.
func (ev *Event) ExprPayload() any {
	if !ev.exprPayloadRead {
		ev.SetExprPayload(condition.DecodePayload(ev.Body))
	}
	return ev.exprPayload
}

// SetExprPayload is for a connector that reads its body as something other than
// JSON: v is the document it read (a form's fields as the object its records store),
// so expressions see what the records hold. The body stays as received (what was
// signed); the connector sets this again whenever it reads the event (replay,
// explain), as it is not stored.
func (ev *Event) SetExprPayload(v any) { ev.exprPayload, ev.exprPayloadRead = v, true }

// Checkpoint is one key of a connector's durable state.
type Checkpoint struct {
	Connector string // e.g. "email/support"
	Key       string // e.g. "INBOX"
	Value     string
}

// EventStatus says what became of an event.
type EventStatus string

// Event statuses.
const (
	EventRouted   EventStatus = "routed"   // at least one record created or merged
	EventUnrouted EventStatus = "unrouted" // no route wanted it
	EventIgnored  EventStatus = "ignored"  // a type the connector does not map, or filtered (bot, subtype)
	EventInvalid  EventStatus = "invalid"  // verified but could not be parsed
)

// NotificationInput is the JSON body that creates a notification, as the agent API
// (POST …/notifications), MCP's notify tool and the generic connector's native body all
// take it. Each front adds its own: the agent API deliverAs and deliveryId.
type NotificationInput struct {
	// Source names the sending system (the generic connector keeps its own source and
	// makes this the "origin" attribute).
	Source string `json:"source"`
	// SourceID is the provider's id of the object the notification is about (a pull
	// request's number, a Slack message's ts, an email's Message-ID): stored and
	// returned, never a merge key.
	SourceID    string          `json:"sourceId"`
	Kind        string          `json:"kind"`
	Summary     string          `json:"summary"`
	Priority    string          `json:"priority"`
	Payload     json.RawMessage `json:"payload"`
	DedupeKey   string          `json:"dedupeKey"`
	CoalesceKey string          `json:"coalesceKey"`
	Attributes  Attributes      `json:"attributes"`
	Metadata    map[string]any  `json:"metadata"`
	// NetKey, State and RestState put the notification in a net-state lane.
	NetKey    string `json:"netKey"`
	State     string `json:"state"`
	RestState string `json:"restState"`
}

// Notification is what a route produces for one thread: the input of the inbox.
type Notification struct {
	Thread      ThreadKey       `json:"thread"`
	Route       string          `json:"route,omitempty"`
	Source      string          `json:"source"`
	SourceID    string          `json:"sourceId,omitempty"` // see NotificationInput.SourceID
	Kind        string          `json:"kind"`
	Priority    Priority        `json:"priority,omitempty"`
	Summary     string          `json:"summary"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	DedupeKey   string          `json:"dedupeKey,omitempty"`
	CoalesceKey string          `json:"coalesceKey,omitempty"`
	Attributes  Attributes      `json:"attributes,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
	DeliverAs   string          `json:"deliverAs,omitempty"`
	// NetKey names the thing whose state this notification reports (a CI check of a
	// pull request, a review request of one reviewer); State is that state and
	// RestState the state that needs no attention. See DecideNet.
	NetKey    string `json:"netKey,omitempty"`
	State     string `json:"state,omitempty"`
	RestState string `json:"restState,omitempty"`
	// StreamOptions are the caller's ifIdle.streamOptions (POST …/notifications): passed
	// to a mastra target when this record wakes the thread, ahead of the policy's.
	StreamOptions map[string]any `json:"streamOptions,omitempty"`
	// EndsWatch, when set, makes this the notification announcing a watch's end: the
	// store ends the watch in the same transaction, and keeps the notification only if
	// the watch was still live (so a thread hears of each end once).
	EndsWatch *WatchEnd `json:"-"`
}

// WatchEnd names a watch to end and why (package watch's End* reasons).
type WatchEnd struct {
	ID     string
	Reason string
}

// Validate checks what the inbox needs; connectors and the agent API call it too.
func (n *Notification) Validate() error {
	var errs []error
	if n.Thread.Agent == "" || n.Thread.Resource == "" || n.Thread.Thread == "" {
		errs = append(errs, errors.New("thread: agent, resourceId and threadId are required"))
	}
	if n.Source == "" {
		errs = append(errs, errors.New("source: required"))
	}
	if n.Kind == "" {
		errs = append(errs, errors.New("kind: required"))
	}
	if n.Priority != "" && !n.Priority.Valid() {
		errs = append(errs, fmt.Errorf("priority: unknown %q (want low, medium, high or urgent)", n.Priority))
	}
	switch n.DeliverAs {
	case DeliverAsNotification, DeliverAsMessage, DeliverAsQueued:
	default:
		errs = append(errs, fmt.Errorf("deliverAs: unknown %q (want message or queued-message)", n.DeliverAs))
	}
	if len(n.Payload) > 0 && !json.Valid(n.Payload) {
		errs = append(errs, errors.New("payload: not valid JSON"))
	}
	if n.NetKey == "" && (n.State != "" || n.RestState != "") {
		errs = append(errs, errors.New("state, restState: need a netKey (the lane they belong to)"))
	}
	return errors.Join(errs...)
}

// Record is an inbox row for one thread.
type Record struct {
	ID          string          `json:"id"`
	Thread      ThreadKey       `json:"thread"`
	EventID     string          `json:"eventId,omitempty"`
	Route       string          `json:"route,omitempty"`
	Source      string          `json:"source"`
	SourceID    string          `json:"sourceId,omitempty"`
	Kind        string          `json:"kind"`
	Priority    Priority        `json:"priority"`
	Summary     string          `json:"summary"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	DedupeKey   string          `json:"dedupeKey,omitempty"`
	CoalesceKey string          `json:"coalesceKey,omitempty"`
	Attributes  Attributes      `json:"attributes"`
	Metadata    map[string]any  `json:"metadata"`
	DeliverAs   string          `json:"deliverAs,omitempty"`
	NetKey      string          `json:"netKey,omitempty"`
	State       string          `json:"state,omitempty"`
	RestState   string          `json:"restState,omitempty"`
	// SupersededBy is the newer record of the lane that replaced this one.
	SupersededBy string `json:"supersededBy,omitempty"`
	// StreamOptions are the ifIdle.streamOptions the record was created with (nil: none),
	// kept for the wake it may start; not shown, as they may carry request context.
	StreamOptions  map[string]any `json:"-"`
	Status         Status         `json:"status"`
	CoalescedCount int            `json:"coalescedCount"`
	Action         Action         `json:"action"`
	Reason         string         `json:"deliveryReason"`
	// OperatorAction is the last thing an operator did to the record (a redelivery),
	// kept beside the policy's decision.
	OperatorAction string     `json:"operatorAction,omitempty"`
	DeliverAt      *time.Time `json:"deliverAt,omitempty"`
	SummaryAt      *time.Time `json:"summaryAt,omitempty"`
	FullWhenIdle   bool       `json:"fullWhenIdle,omitempty"`
	Attempts       int        `json:"attempts"` // every attempt, across redeliveries and the record's summary
	// AttemptsBefore is how many of Attempts came before the current round (a redelivery
	// or a delivered summary starts one): max_attempts and the backoff count from it.
	AttemptsBefore int        `json:"-"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt,omitempty"`
	FirstAttemptAt *time.Time `json:"firstAttemptAt,omitempty"` // a failed record gives up max_age after it
	LastError      string     `json:"lastError,omitempty"`
	SignalID       string     `json:"deliveredSignalId,omitempty"`
	SummarySignal  string     `json:"summarySignalId,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	DeliveredAt    *time.Time `json:"deliveredAt,omitempty"`
	// When the record was last attempted and left each status it can only reach once
	// (Mastra's lastDeliveryAttemptAt, seenAt, dismissedAt, archivedAt, discardedAt).
	LastAttemptAt *time.Time `json:"lastDeliveryAttemptAt,omitempty"`
	SeenAt        *time.Time `json:"seenAt,omitempty"`
	DismissedAt   *time.Time `json:"dismissedAt,omitempty"`
	ArchivedAt    *time.Time `json:"archivedAt,omitempty"`
	DiscardedAt   *time.Time `json:"discardedAt,omitempty"`
	// SnoozedUntil is when a snoozed record is decided again (status snoozed only).
	SnoozedUntil *time.Time `json:"snoozedUntil,omitempty"`
	// HeldBy and HeldUntil say what holds a pending record and until when (see Hold):
	// a held record has no deliverAt or summaryAt.
	HeldBy    string     `json:"heldBy,omitempty"`
	HeldUntil *time.Time `json:"heldUntil,omitempty"`
	// TraceParent is the traceparent of the span that stored the event that made the
	// record; TraceLinks those of the events merged into it since (at most
	// MaxTraceLinks). The delivery's spans continue the first and link to the rest.
	TraceParent string   `json:"-"`
	TraceLinks  []string `json:"-"`
}

// DueAt is when the dispatcher next has work for the record: min(deliverAt, summaryAt),
// pushed back to nextAttemptAt after a failure. Nil when nothing is scheduled.
func (r *Record) DueAt() *time.Time {
	if r.Status != StatusPending {
		return nil
	}
	var due *time.Time
	for _, t := range []*time.Time{r.DeliverAt, r.SummaryAt} {
		if t != nil && (due == nil || t.Before(*due)) {
			due = t
		}
	}
	if due != nil && r.NextAttemptAt != nil && r.NextAttemptAt.After(*due) {
		due = r.NextAttemptAt
	}
	return due
}

// IngestResult tells a caller what one event became.
type IngestResult struct {
	EventID   string          `json:"eventId"`
	Duplicate bool            `json:"duplicate"` // the provider delivery id was seen before; nothing changed
	Records   []RecordOutcome `json:"records"`
}

// RecordOutcome is the fate of one notification of an event.
type RecordOutcome struct {
	RecordID string    `json:"recordId"`
	Thread   ThreadKey `json:"thread"`
	Merged   bool      `json:"merged"` // absorbed by an existing pending record
	Decision Decision  `json:"decision"`
	// Net is the net-state verdict of a notification with a netKey.
	Net *NetDecision `json:"net,omitempty"`
}

// Digest is the hex SHA-256 of a body: a bounded index key for any body size.
func Digest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
