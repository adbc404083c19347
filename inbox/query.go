package inbox

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// EventFilter selects stored events, newest first. Zero fields match everything.
type EventFilter struct {
	Source    string
	Connector string
	Type      string
	Status    EventStatus // routed, unrouted, ignored, invalid
	// Duplicate, when set, keeps events that were (true) or were not (false) redelivered.
	Duplicate *bool
	Since     time.Time // received at or after
	Until     time.Time // received before
	Limit     int
	Cursor    string // from the previous page's Next
}

// RecordFilter selects records, newest first. Zero fields match everything.
type RecordFilter struct {
	Agent    string
	Resource string
	Thread   string
	Status   []Status
	Priority Priority
	Source   string
	Kind     string
	Text     string // substring of summary, kind or source (case-insensitive)
	EventID  string
	Limit    int
	Cursor   string
}

// Page limits.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// ErrBadCursor reports a cursor that this server did not issue.
var ErrBadCursor = errors.New("invalid cursor")

// Cursor is a position in a newest-first listing: the last row's time and id.
type Cursor struct {
	At time.Time
	ID string
}

// Encode makes the opaque string clients pass back.
func (c Cursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMicro(), 10) + ":" + c.ID))
}

// ParseCursor reads an Encode()d cursor; "" is the first page.
func ParseCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	us, perr := strconv.ParseInt(ts, 10, 64)
	if !ok || perr != nil || id == "" {
		return nil, ErrBadCursor
	}
	return &Cursor{At: time.UnixMicro(us).UTC(), ID: id}, nil
}

// PageSize clamps a requested limit.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}

// ConnectorActivity is what the stored events say about a connector's health.
type ConnectorActivity struct {
	LastEvent *EventRef `json:"lastEvent"`
	// LastError is the newest event that could not be parsed or routed.
	LastError *EventRef `json:"lastError"`
}

// EventRef summarises one stored event.
type EventRef struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`
	Status     EventStatus `json:"status"`
	Error      string      `json:"error,omitempty"`
	ReceivedAt time.Time   `json:"receivedAt"`
}
