package agent

import (
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// MessageSignal turns a record a route marked deliver_as message (or queued-message) into
// user-authored input: a user signal whose attributes (name, from, …) say who wrote it,
// rendered <user name="Jane" from="slack">can you look?</user>.
func MessageSignal(r inbox.Record, id string, now time.Time) Signal {
	attrs, err := NormalizeAttributes(r.Attributes)
	if err != nil {
		attrs = renderable(r.Attributes)
	}
	return Signal{
		ID:         id,
		Type:       TypeUser,
		TagName:    TypeUser.DefaultTag(),
		Contents:   r.Summary,
		Attributes: attrs,
		Metadata:   map[string]any{"recordId": r.ID},
		CreatedAt:  now,
		AcceptedAt: now,
	}
}
