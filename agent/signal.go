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
	"strings"
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
	// Parts are the contents as Mastra's parts when the sender gave an array (text and
	// file parts); Contents is then their text, joined by newlines.
	Parts []Part `json:"parts,omitempty"`
	// ProviderOptions (Mastra's) go to the model provider with the signal's message.
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
	// Transient signals are handed to the target once and never written to the thread's
	// log (Mastra's transient).
	Transient bool `json:"transient,omitempty"`
}

// Part is one of a signal's contents parts, as Mastra takes them: {type: text, text} or
// {type: file, data, mediaType, filename?}, each with optional providerOptions.
type Part struct {
	Type            string         `json:"type"`
	Text            string         `json:"text,omitempty"`
	Data            string         `json:"data,omitempty"`
	MediaType       string         `json:"mediaType,omitempty"`
	Filename        string         `json:"filename,omitempty"`
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
}

// ParseContents reads a signal's contents as Mastra sends them: a string, or an array of
// text and file parts (returned with their text joined by newlines, as Mastra renders
// them in a tag). Absent or null is empty text.
func ParseContents(raw json.RawMessage) (string, []Part, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	if raw[0] != '[' {
		return "", nil, errors.New("want a string or an array of text and file parts")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var parts []Part
	if err := dec.Decode(&parts); err != nil {
		return "", nil, fmt.Errorf("want an array of text and file parts: %w", err)
	}
	texts := make([]string, 0, len(parts))
	for i, p := range parts {
		switch p.Type {
		case "text":
			if p.Data != "" || p.MediaType != "" || p.Filename != "" {
				return "", nil, fmt.Errorf("[%d]: a text part has only text and providerOptions", i)
			}
			texts = append(texts, p.Text)
		case "file":
			if p.Data == "" || p.MediaType == "" || p.Text != "" {
				return "", nil, fmt.Errorf("[%d]: a file part needs data and mediaType (and has no text)", i)
			}
		default:
			return "", nil, fmt.Errorf("[%d].type: unknown %q (want text or file)", i, p.Type)
		}
	}
	return strings.Join(texts, "\n"), parts, nil
}

// size is the bytes of a signal's contents, file data included.
func (s Signal) size() int {
	n := len(s.Contents)
	for _, p := range s.Parts {
		n += len(p.Data)
	}
	return n
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
	// Parts, ProviderOptions and Transient: see Signal (the agent API fills Parts from
	// an array of contents).
	Parts           []Part         `json:"-"`
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
	Transient       bool           `json:"transient,omitempty"`
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
	if t == TypeState && in.Transient {
		return Signal{}, invalid(ErrInvalid, "transient: a state signal cannot be transient (its lane keeps it), as in Mastra")
	}
	if n := (Signal{Contents: in.Contents, Parts: in.Parts}).size(); n > maxContents {
		return Signal{}, invalid(ErrContentsTooLarge, "contents is %d bytes, over the limit of %d bytes", n, maxContents)
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
		Parts:      in.Parts,
		Transient:  in.Transient,
		// A provider option is the provider's business: passed on as given.
		ProviderOptions: in.ProviderOptions,
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
