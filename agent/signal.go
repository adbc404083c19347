// Package agent is the agent domain, with no transport: the signal model, its XML
// rendering for the model, delivery options and state lanes; thread presence (runs);
// the durable per-thread log with its live fan-out; the stream target; the delivery
// contract (Result, DeliveryError); and the operations (runs, signals, notifications,
// the inbox, approvals) that the HTTP API (agentapi) and MCP (inboxmcp) call.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// SignalType is the kind of a signal. The tag name, not the type, says what it is about.
type SignalType string

// Signal types.
const (
	TypeUser         SignalType = "user"
	TypeState        SignalType = "state"
	TypeReactive     SignalType = "reactive"
	TypeNotification SignalType = "notification"
)

// Legacy type names still accepted on input.
const (
	legacyUserMessage    = "user-message"
	legacySystemReminder = "system-reminder"
)

// Valid reports whether t is one of the four signal types.
func (t SignalType) Valid() bool {
	switch t {
	case TypeUser, TypeState, TypeReactive, TypeNotification:
		return true
	}
	return false
}

// DefaultTag is the tag name a signal of type t gets when none is given.
func (t SignalType) DefaultTag() string {
	switch t {
	case TypeUser:
		return "user"
	case TypeState:
		return "state"
	case TypeNotification:
		return "notification"
	case TypeReactive:
		return "system-reminder"
	}
	return ""
}

// Signal is what an agent thread receives.
type Signal struct {
	ID         string           `json:"id"`
	Type       SignalType       `json:"type"`
	TagName    string           `json:"tagName"`
	Contents   string           `json:"contents"`
	Attributes inbox.Attributes `json:"attributes"`
	Metadata   map[string]any   `json:"metadata"`
	CreatedAt  time.Time        `json:"createdAt"`
	AcceptedAt time.Time        `json:"acceptedAt"`
}

// XML renders the signal the way the model sees it.
func (s Signal) XML() string { return RenderXML(s) }

// SignalInput is a signal as a caller sends it, before normalisation.
type SignalInput struct {
	ID         string           `json:"id,omitempty"`
	Type       string           `json:"type"`
	TagName    string           `json:"tagName,omitempty"`
	Contents   string           `json:"contents"`
	Attributes inbox.Attributes `json:"attributes,omitempty"`
	Metadata   map[string]any   `json:"metadata,omitempty"`
	CreatedAt  *time.Time       `json:"createdAt,omitempty"`
}

// DefaultMaxContents is the contents limit in bytes used when none is configured.
const DefaultMaxContents = 256 << 10

// Errors of signal and option validation. Every one also matches ErrInvalid, so
// an HTTP layer can map errors.Is(err, ErrInvalid) to 400.
var (
	ErrInvalid          = errors.New("invalid signal")
	ErrUnknownType      = errors.New("unknown signal type")
	ErrInvalidName      = errors.New("invalid name")
	ErrContentsTooLarge = errors.New("contents too large")
	ErrAttributeValue   = errors.New("invalid attribute value")
	ErrInvalidOptions   = errors.New("invalid delivery options")
)

// ValidationError carries a readable message and the sentinel it belongs to.
type ValidationError struct {
	Kind error // one of the Err* values above
	Msg  string
}

func (e *ValidationError) Error() string { return e.Msg }

// Unwrap lets errors.Is match both the specific kind and ErrInvalid.
func (e *ValidationError) Unwrap() []error { return []error{e.Kind, ErrInvalid} }

func invalid(kind error, format string, args ...any) error {
	return &ValidationError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// NamePattern is what tag and attribute names must match: a subset of XML names,
// so a valid name can never break the rendered XML.
const NamePattern = `^[A-Za-z_][A-Za-z0-9_.-]*$`

var nameRE = regexp.MustCompile(NamePattern)

// ValidName reports whether name is usable as a tag or attribute name.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// ParseType maps an input type, legacy names included, to a type and the tag
// name it implies ("" when the type's default applies).
func ParseType(s string) (SignalType, string, error) {
	switch s {
	case legacyUserMessage:
		return TypeUser, "", nil
	case legacySystemReminder:
		return TypeReactive, "system-reminder", nil
	case "":
		return "", "", invalid(ErrUnknownType, "type: required (user, state, reactive or notification)")
	}
	t := SignalType(s)
	if !t.Valid() {
		return "", "", invalid(ErrUnknownType, "unknown signal type %q: use type %q with tagName %q", s, TypeReactive, s)
	}
	return t, "", nil
}

// NormalizeSignal validates in and returns the signal it describes. maxContents
// is the contents limit in bytes; zero or less means DefaultMaxContents. ID and
// CreatedAt are copied as given (zero when absent); Accept fills CreatedAt.
func NormalizeSignal(in SignalInput, maxContents int) (Signal, error) {
	t, impliedTag, err := ParseType(in.Type)
	if err != nil {
		return Signal{}, err
	}
	tag := in.TagName
	if tag == "" {
		tag = impliedTag
	}
	if tag == "" {
		tag = t.DefaultTag()
	}
	if !ValidName(tag) {
		return Signal{}, invalid(ErrInvalidName, "invalid tagName %q: names must match %s", tag, NamePattern)
	}
	if maxContents <= 0 {
		maxContents = DefaultMaxContents
	}
	if len(in.Contents) > maxContents {
		return Signal{}, invalid(ErrContentsTooLarge, "contents is %d bytes, over the limit of %d bytes", len(in.Contents), maxContents)
	}
	attrs, err := NormalizeAttributes(in.Attributes)
	if err != nil {
		return Signal{}, err
	}
	meta := in.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	s := Signal{
		ID:         in.ID,
		Type:       t,
		TagName:    tag,
		Contents:   in.Contents,
		Attributes: attrs,
		Metadata:   meta,
	}
	if in.CreatedAt != nil {
		s.CreatedAt = *in.CreatedAt
	}
	return s, nil
}

// NormalizeAttributes checks every name and value and returns a copy with nulls
// dropped and repeated keys folded into their first position (last value wins).
func NormalizeAttributes(a inbox.Attributes) (inbox.Attributes, error) {
	if len(a) == 0 {
		return inbox.Attributes{}, nil
	}
	out := make(inbox.Attributes, 0, len(a))
	for _, kv := range a {
		if !ValidName(kv.Key) {
			return nil, invalid(ErrInvalidName, "invalid attribute name %q: names must match %s", kv.Key, NamePattern)
		}
		if kv.Value == nil {
			continue
		}
		if err := checkValue(kv.Value); err != nil {
			return nil, invalid(ErrAttributeValue, "attribute %q: %v", kv.Key, err)
		}
		out = out.Set(kv.Key, kv.Value)
	}
	return out, nil
}

func checkValue(v any) error {
	switch x := v.(type) {
	case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return errors.New("numbers must be finite")
		}
		return nil
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("numbers must be finite")
		}
		return nil
	case json.Number:
		if _, err := x.Float64(); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("got %T: values must be strings, numbers or booleans", v)
}

// Accept stamps a signal at acceptance: the conditional attributes of the
// delivery options are merged in (they win over the signal's own), AcceptedAt
// is set and a missing CreatedAt becomes now.
func Accept(s Signal, extra inbox.Attributes, now time.Time) Signal {
	s.Attributes = s.Attributes.Merge(extra)
	if s.Attributes == nil {
		s.Attributes = inbox.Attributes{}
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.AcceptedAt = now
	return s
}
