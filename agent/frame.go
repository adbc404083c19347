package agent

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Frame events: the SSE `event:` of a thread log entry.
const (
	EventSignal = "signal"
	EventRun    = "run"
)

// Run statuses. Only an open run whose lease has not lapsed makes its thread active.
const (
	RunOpen     = "open"
	RunFinished = "finished"
	RunExpired  = "expired"
	RunAborted  = "aborted"
)

// Recovery causes: why the run a recovered signal was in flight in ended without
// finishing (metadata recoveredCause of the redelivered signal).
const (
	// CauseLeaseExpired: nothing renewed or finished the run before its lease lapsed.
	CauseLeaseExpired = "lease-expired"
	// CauseAborted: the run was closed as aborted (the agent API, Mastra's abort chunk,
	// a wake whose signal never reached the agent).
	CauseAborted = "aborted"
	// CauseCrashed: the runtime failed (Mastra's error chunk) or the run ended while the
	// gateway could not see it (its stream was lost, or the gateway was down).
	CauseCrashed = "crashed"
)

// Run origins: who opened the run. A run the gateway learned of from a runtime that
// reports its runs (PresenceRuntime) has the runtime's target kind as its origin.
const (
	OriginAgent = "agent" // the agent runtime, through the agent API
	OriginWake  = "wake"  // the gateway, waking an idle thread
)

// Errors of the run lifecycle.
var (
	ErrRunNotFound = errors.New("run not found")
	ErrRunClosed   = errors.New("run is not open")
)

// Run is one stretch of an agent working on a thread.
type Run struct {
	ID         string          `json:"runId"`
	Thread     inbox.ThreadKey `json:"thread"`
	Status     string          `json:"status"`
	Origin     string          `json:"origin"`
	OpenedAt   time.Time       `json:"openedAt"`
	LeaseUntil time.Time       `json:"leaseUntil"`
	ClosedAt   *time.Time      `json:"closedAt,omitempty"`
}

// Live reports whether the run keeps its thread active at now.
func (r Run) Live(now time.Time) bool { return r.Status == RunOpen && r.LeaseUntil.After(now) }

// Frame is one entry of a thread's durable log: a signal the thread received, or a run
// opening or closing. Seq orders a thread's frames and is the SSE event id.
type Frame struct {
	Seq       int64
	Event     string // EventSignal or EventRun
	ID        string // the signal id (signal frames) or a unique frame id (run frames)
	Thread    inbox.ThreadKey
	RunID     string
	Behavior  Behavior // signal frames: wake, deliver or persist
	Signal    Signal   // signal frames
	XML       string   // signal frames: what the model sees
	RecordIDs []string // inbox records the signal carries, if any
	RunStatus string   // run frames
	Origin    string   // run frames
	CreatedAt time.Time
	// Encoded, when set, is the frame's data object as built by whoever made the frame
	// from its logged row (the store, for frames handed to live subscribers in memory):
	// written as is, so the row's JSON columns are neither decoded nor encoded again.
	Encoded json.RawMessage
}

// SignalFrame builds the log entry for a delivery.
func SignalFrame(d Handoff, now time.Time) Frame {
	return Frame{
		Event:     EventSignal,
		ID:        d.Signal.ID,
		Thread:    d.Thread,
		RunID:     d.RunID,
		Behavior:  d.Behavior,
		Signal:    d.Signal,
		XML:       RenderXML(d.Signal),
		RecordIDs: d.RecordIDs,
		CreatedAt: now,
	}
}

type signalData struct {
	ID         string     `json:"id"`
	Seq        int64      `json:"seq"`
	RunID      *string    `json:"runId"`
	Action     Behavior   `json:"action"`
	Type       SignalType `json:"type"`
	TagName    string     `json:"tagName"`
	Contents   string     `json:"contents"`
	Attributes any        `json:"attributes"` // inbox.Attributes, or its JSON text
	Metadata   any        `json:"metadata"`   // map[string]any, or its JSON text
	XML        string     `json:"xml"`
	CreatedAt  time.Time  `json:"createdAt"`
	AcceptedAt time.Time  `json:"acceptedAt"`
	// Mastra's fields beyond the tag, when the signal has them ([]Part and map[string]any,
	// or their JSON texts).
	Parts           any  `json:"parts,omitempty"`
	ProviderOptions any  `json:"providerOptions,omitempty"`
	Transient       bool `json:"transient,omitempty"`
}

type runData struct {
	ID        string    `json:"id"`
	Seq       int64     `json:"seq"`
	RunID     string    `json:"runId"`
	Status    string    `json:"status"`
	Origin    string    `json:"origin"`
	CreatedAt time.Time `json:"createdAt"`
}

// MarshalJSON writes the SSE `data:` object of the frame. For a signal frame `id` is the
// signal id (stable across retries, so subscribers can dedupe), runId is null outside a run.
func (f Frame) MarshalJSON() ([]byte, error) {
	if len(f.Encoded) > 0 {
		return f.Encoded, nil
	}
	if f.Event == EventRun {
		return json.Marshal(runData{ID: f.ID, Seq: f.Seq, RunID: f.RunID, Status: f.RunStatus, Origin: f.Origin, CreatedAt: f.CreatedAt})
	}
	d := f.signalData()
	attrs, meta := f.Signal.Attributes, f.Signal.Metadata
	if attrs == nil {
		attrs = inbox.Attributes{}
	}
	if meta == nil {
		meta = map[string]any{}
	}
	d.Attributes, d.Metadata = attrs, meta
	if len(f.Signal.Parts) > 0 {
		d.Parts = f.Signal.Parts
	}
	if len(f.Signal.ProviderOptions) > 0 {
		d.ProviderOptions = f.Signal.ProviderOptions
	}
	return json.Marshal(d)
}

// EncodeLogged is the data object of a frame whose JSON parts are given as the log
// stores them (attributes and metadata objects, parts and providerOptions when the
// signal has them): the same bytes MarshalJSON gives once those texts are decoded
// into f, without decoding them. Run frames take no texts.
func EncodeLogged(f Frame, attributes, metadata, parts, providerOptions json.RawMessage) (json.RawMessage, error) {
	f.Encoded = nil
	if f.Event == EventRun {
		return f.MarshalJSON()
	}
	d := f.signalData()
	d.Attributes, d.Metadata = attributes, metadata
	if len(parts) > 0 {
		d.Parts = parts
	}
	if len(providerOptions) > 0 {
		d.ProviderOptions = providerOptions
	}
	return json.Marshal(d)
}

// signalData is f's data object without its JSON parts.
func (f Frame) signalData() signalData {
	d := signalData{
		ID: f.ID, Seq: f.Seq, Action: f.Behavior, Type: f.Signal.Type, TagName: f.Signal.TagName,
		Contents: f.Signal.Contents, XML: f.XML, CreatedAt: f.Signal.CreatedAt, AcceptedAt: f.Signal.AcceptedAt,
		Transient: f.Signal.Transient,
	}
	if f.RunID != "" {
		d.RunID = &f.RunID
	}
	return d
}

// Handoff is one signal on its way to a thread's target. Targets get the same signal id
// on every retry and must treat a repeated id as already delivered where they can.
type Handoff struct {
	Thread    inbox.ThreadKey
	Signal    Signal
	Behavior  Behavior // wake, deliver or persist
	RunID     string   // the run the signal goes into (the one a wake opened); "" for none
	RecordIDs []string
	Attempt   int // 1 for the first try
	// StreamOptions are ifIdle.streamOptions, for targets that start runs themselves.
	StreamOptions map[string]any
	// NoWake: a target that learns presence itself must not wake an idle thread for this
	// signal (ifIdle persist), yet delivers it into an active run (a low-only summary).
	NoWake bool
	// DeliverAs marks user-authored input: inbox.DeliverAsMessage goes into the active run
	// or wakes; inbox.DeliverAsQueued starts the next run. "" is any other signal.
	DeliverAs string
	// ReplyTo is where an answer to the signal goes: metadata.replyTo of the newest of its
	// records whose provenance vouches for it (ReplyProvenance.ReplyToOf), as stored
	// (nil: none has). A target that answers by itself answers a run's wake there.
	ReplyTo any
}
