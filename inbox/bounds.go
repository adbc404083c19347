package inbox

import (
	"errors"
	"fmt"
	"strings"
)

// Bounds on the request values that reach a database index. PostgreSQL refuses a
// B-tree entry over 2704 bytes (a third of a page) and several indexes combine a
// thread's ids with a key, so each part is bounded well below that.
const (
	// MaxKeyBytes bounds provider delivery ids and dedupe/coalesce/net keys; a longer one
	// is stored as HashKey of it, which keeps equality (redeliveries, merges) intact.
	MaxKeyBytes = 255
	// MaxIDBytes bounds a thread's resource and thread ids (the agent API's limit on
	// path ids).
	MaxIDBytes = 512
	// MaxLabelBytes bounds a notification's source, kind and route.
	MaxLabelBytes = 200
)

// HashKey returns k, or "sha256:" and its hex SHA-256 when k is over MaxKeyBytes.
func HashKey(k string) string {
	if len(k) <= MaxKeyBytes {
		return k
	}
	return "sha256:" + Digest([]byte(k))
}

// CheckBounds reports the thread ids, source, kind or route over their bounds: values
// that cannot be indexed, and so cannot be stored as a record. (Over-long keys are
// hashed instead; see HashKey.)
func (n *Notification) CheckBounds() error {
	var errs []error
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"thread.resourceId", n.Thread.Resource, MaxIDBytes},
		{"thread.threadId", n.Thread.Thread, MaxIDBytes},
		{"thread.agent", n.Thread.Agent, MaxIDBytes},
		{"source", n.Source, MaxLabelBytes},
		{"kind", n.Kind, MaxLabelBytes},
		{"route", n.Route, MaxLabelBytes},
		{"state", n.State, MaxLabelBytes},
		{"restState", n.RestState, MaxLabelBytes},
		{"sourceId", n.SourceID, MaxKeyBytes},
	} {
		if len(f.v) > f.max {
			errs = append(errs, fmt.Errorf("%s: %d bytes, over the limit of %d", f.name, len(f.v), f.max))
		}
	}
	return errors.Join(errs...)
}

// FitSourceID is a provider's object id as a connector stores it: over MaxKeyBytes it is
// left out, since a record must not be refused for a label.
func FitSourceID(id string) string {
	if len(id) > MaxKeyBytes {
		return ""
	}
	return id
}

// CleanText makes text storable in both dialects: PostgreSQL refuses NUL and invalid
// UTF-8 in text columns, so both become U+FFFD.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
