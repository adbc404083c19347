// Package reply is the agent's way back: a durable outbox of answers to post where a
// notification came from (a Slack DM or thread, a GitHub issue or PR, an email), sent
// exactly once by a service that claims due replies like the dispatcher claims threads,
// through one Sender per platform.
package reply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// To is where an answer goes: the replyTo a connector puts in a notification's metadata
// (metadata.replyTo), and a reply's destination. Source and Connector say which
// connector kind and which of its connectors; Place is the rest, the kind's own fields
// (a Slack DM or thread, a GitHub issue or review thread, an email), which only that
// kind's place codec reads (Places).
//
// On the wire a To is one flat object: {"source", "connector", and the place's fields}.
// The place's fields are kept in one canonical form (by name, compact), so two Tos of
// the same place are equal however they were written.
type To struct {
	Source    string `json:"source"`
	Connector string `json:"connector"`
	// Place is the place's fields as one JSON object, without source and connector
	// (NewTo writes it from the kind's place type).
	Place json.RawMessage `json:"-"`
}

// MarshalJSON writes t flat: source, connector, then the place's fields.
func (t To) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"source":`)
	src, _ := json.Marshal(t.Source)
	b.Write(src)
	b.WriteString(`,"connector":`)
	conn, _ := json.Marshal(t.Connector)
	b.Write(conn)
	fields, err := placeFields(t.Place)
	if err != nil {
		return nil, fmt.Errorf("encode the place of replyTo: %w", err)
	}
	for _, f := range fields {
		if f.name == "source" || f.name == "connector" {
			continue
		}
		name, _ := json.Marshal(f.name)
		b.WriteByte(',')
		b.Write(name)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a flat replyTo: source and connector, and every other field as
// the place (which its kind's codec reads).
func (t *To) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var head struct {
		Source    string `json:"source"`
		Connector string `json:"connector"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	place, err := canonicalPlace(data)
	if err != nil {
		return err
	}
	*t = To{Source: head.Source, Connector: head.Connector, Place: place}
	return nil
}

// canonicalPlace is the place fields of the JSON object obj (all but source and
// connector) in their canonical form: by name, each once (the last, as decoding reads
// it), compact.
func canonicalPlace(obj []byte) (json.RawMessage, error) {
	fields, err := placeFields(obj)
	if err != nil {
		return nil, err
	}
	byName := map[string][]byte{}
	for _, f := range fields {
		if f.name != "source" && f.name != "connector" {
			byName[f.name] = f.value
		}
	}
	names := slices.Sorted(maps.Keys(byName))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(n)
		b.Write(name)
		b.WriteByte(':')
		b.Write(byName[n])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type placeField struct {
	name  string
	value []byte // compact JSON
}

// placeFields are the members of a JSON object in their order, each value compacted
// (nil or empty: none).
func placeFields(obj []byte) ([]placeField, error) {
	if len(bytes.TrimSpace(obj)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %v", tok)
	}
	var out []placeField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		out = append(out, placeField{name: name, value: c.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// MetadataKey is the notification metadata key connectors put a To under.
const MetadataKey = agent.MetaReplyTo

// FromMetadata reads the To a notification's metadata carries, if any.
func FromMetadata(md map[string]any) (To, bool) {
	v, ok := md[MetadataKey]
	if !ok {
		return To{}, false
	}
	return Parse(v)
}

// Parse reads a To from metadata.replyTo's value, as stored (a decoded JSON object) or
// as a connector put it (a To).
func Parse(v any) (To, bool) {
	if v == nil {
		return To{}, false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return To{}, false
	}
	var t To
	if json.Unmarshal(raw, &t) != nil || t.Source == "" || t.Connector == "" {
		return To{}, false
	}
	return t, true
}

// Status of a reply.
type Status string

const (
	StatusQueued   Status = "queued"   // on disk, waiting to be sent (or retried)
	StatusSent     Status = "sent"     // the platform took it; PlatformID and URL say where
	StatusFailed   Status = "failed"   // a permanent platform error, or max_age passed
	StatusPending  Status = "pending"  // waiting for approval (agents[].replies.approval)
	StatusDeclined Status = "declined" // an approver declined it
)

// Reply is one answer in the outbox.
type Reply struct {
	ID     string          `json:"id"` // the agent's id: the same id again is the same reply
	Thread inbox.ThreadKey `json:"-"`
	Text   string          `json:"text"`
	To     To              `json:"replyTo"`
	Watch  bool            `json:"watch,omitempty"`
	Status Status          `json:"status"`

	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	LastError     string     `json:"lastError,omitempty"`

	// Once sent: the platform's id of the post (Slack ts, GitHub comment id, email
	// Message-ID) and a link to it when the platform has one.
	PlatformID string     `json:"platformId,omitempty"`
	URL        string     `json:"url,omitempty"`
	SentAt     *time.Time `json:"sentAt,omitempty"`

	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// QueuedAt is when it last became queued (accepted, approved, retried):
	// replies.max_age counts from here.
	QueuedAt time.Time `json:"-"`
}

// Sent is where a platform put a reply.
type Sent struct {
	PlatformID string
	URL        string
}

// Sender posts replies to one platform (connectors/slack, connectors/github,
// connectors/email each provide one over their configured connectors).
//
// Neither Slack nor GitHub has an idempotency key, so every post carries the reply's
// marker (Slack message metadata with the reply id, a hidden
// `<!-- signalgate:reply:ID -->` in a GitHub comment, a Message-ID derived from the reply
// id for email). Before posting a reply that was attempted before (Attempts > 0: the
// gateway may have died between the platform's answer and recording it), the service
// calls Find; only when the marker is not there does it Send again.
type Sender interface {
	// Check refuses, before a reply is accepted, what this sender can never post: an
	// unknown connector or place (an error wrapping ErrUnknownPlace), a connector without
	// credentials (wrapping ErrNoCredentials, naming the missing key), text over the
	// platform's limit (wrapping ErrTooLong).
	Check(to To, text string) error
	// Find looks for r's marker where r goes; found is false when it is not there.
	Find(ctx context.Context, r Reply) (s Sent, found bool, err error)
	// Send posts r with its marker. On failure, retry reports whether it may succeed
	// later (rate limits, 5xx, timeouts); a permanent error (channel_not_found,
	// not_in_channel, GitHub 403/404/422, SMTP 5xx) is retry false. A *RetryAfter error
	// (errors.As) carries the platform's wait.
	Send(ctx context.Context, r Reply) (s Sent, retry bool, err error)
}

// RetryAfter is a failure that names how long to wait (Slack 429 Retry-After, GitHub's
// secondary rate limit).
type RetryAfter struct {
	Wait time.Duration
	Err  error
}

func (e *RetryAfter) Error() string { return e.Err.Error() }
func (e *RetryAfter) Unwrap() error { return e.Err }

// Errors a Sender or the API answers with.
var (
	// ErrNoCredentials: the connector cannot post (no bot_token, token or app, smtp);
	// the message names the missing key.
	ErrNoCredentials = errors.New("the connector has no credentials for replies")
	// ErrTooLong: the text is over the platform's limit (Slack 40,000 characters,
	// GitHub 65,536).
	ErrTooLong = errors.New("reply text over the platform's limit")
	// ErrUnknownPlace: replyTo names no configured connector of its source, or lacks the
	// fields the platform needs.
	ErrUnknownPlace = errors.New("unknown reply destination")
)

// Own tells a connector whether an incoming event is one of the gateway's own replies
// coming back (Slack `message` from the bot, an `issue_comment` by the token's user, a
// copy of the mail), by the platform id recorded when it was sent: Slack
// "<channel>/<ts>", GitHub the comment id in decimal, email the Message-ID without
// angle brackets. Such events are stored ignored with reason "own reply".
type Own interface {
	OwnReply(ctx context.Context, source, connector, platformID string) (bool, error)
}

// OwnReason is the ignored reason of an event that is the gateway's own reply.
const OwnReason = "own reply"

// Code is the stable code the fronts (the agent API, MCP) answer a refusal of Queue, Get
// or Retry with; ok is false for anything else (a fault of the gateway).
func Code(err error) (code string, ok bool) {
	switch {
	case errors.Is(err, ErrInvalid):
		return "invalid_request", true
	case errors.Is(err, ErrUnknownPlace):
		return "unknown_reply_to", true
	case errors.Is(err, ErrTooLong):
		return "too_long", true
	case errors.Is(err, ErrNoCredentials):
		return "no_credentials", true
	case errors.Is(err, ErrConflict), errors.Is(err, ErrNotRetryable):
		return "conflict", true
	case errors.Is(err, ErrNoApprovers):
		return "no_approvers", true
	case errors.Is(err, watch.ErrForbidden):
		return "forbidden", true // as the watch API answers the same watch
	case errors.Is(err, watch.ErrUnknown):
		return "unknown_resource", true
	case errors.Is(err, watch.ErrInvalid):
		return "invalid_request", true
	case errors.Is(err, inbox.ErrNotFound):
		return "not_found", true
	}
	return "", false
}

// NotFoundMessage is what the fronts say of a reply another thread's agent asked for (or
// none): the same as of one that does not exist.
const NotFoundMessage = "no such reply in this thread"
