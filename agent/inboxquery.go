package agent

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// RecordQuery selects a thread's records for its agent's inbox.
type RecordQuery struct {
	Thread   inbox.ThreadKey
	Statuses []inbox.Status // empty: every status
	Sources  []string       // empty: every source
	Kinds    []string       // empty: every kind
	Search   string         // case-insensitive substring of summary, kind or source
	After    *RecordCursor  // continue after this record in the listing order
	Oldest   bool           // oldest first instead of newest first
	Limit    int

	// Priorities filters by priority (Mastra's inbox tool); empty: every priority.
	Priorities []inbox.Priority
}

// RecordCursor is a position in a listing: the (createdAt, id) of the last record seen.
type RecordCursor struct {
	CreatedAt time.Time
	ID        string
}

// String encodes the cursor opaquely for a URL.
func (c RecordCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + ":" + c.ID))
}

// ParseRecordCursor decodes RecordCursor.String.
func ParseRecordCursor(s string) (RecordCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return RecordCursor{}, errors.New("cursor: not a cursor this API returned")
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	us, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return RecordCursor{}, errors.New("cursor: not a cursor this API returned")
	}
	return RecordCursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}
