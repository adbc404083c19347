package inbox

import (
	"time"
)

// Hold keeps a pending record from being delivered or summarised until Until: a
// silence (package silence) or a policy rule's mute_time_intervals. A held record is
// never dropped; when its hold ends it is decided again as of that moment (see
// HoldStore.ReleaseHeld), and what a thread accumulated is told as one summary.
type Hold struct {
	// By names what holds the record: "silence:<id>" or "mute:<interval>".
	By string `json:"by"`
	// Until is when the hold ends as known now (a silence's endsAt, the end of the
	// interval's current occurrence). An early end moves it to that moment.
	Until time.Time `json:"until"`
	// Reason is the decision reason's head, e.g. "silenced by <id>" or "muted by
	// interval nights (rule[2])".
	Reason string `json:"reason"`
}

// Holder answers whether a record about to be sent is held right now, and by what. It
// is asked for every record the policy would send (not for discard or persist) and
// again by the dispatcher when a record falls due, so a hold that began after the
// record was decided still applies. It must be cheap: it runs in the ingest and claim
// transactions.
type Holder interface {
	Held(s Subject, now time.Time) (Hold, bool)
}

// HolderFunc adapts a function to Holder.
type HolderFunc func(s Subject, now time.Time) (Hold, bool)

// Held calls f.
func (f HolderFunc) Held(s Subject, now time.Time) (Hold, bool) { return f(s, now) }

// Holders asks each holder in turn and answers the first hold: a silence, say, then the
// policy's muting intervals. It reads payloads if any of them does.
type Holders []Holder

// Held answers the first of hs's holds on s at now.
func (hs Holders) Held(s Subject, now time.Time) (Hold, bool) {
	for _, h := range hs {
		if h == nil {
			continue
		}
		if hold, ok := h.Held(s, now); ok {
			return hold, true
		}
	}
	return Hold{}, false
}

// UsesPayload reports whether one of hs needs the event's payload decoded.
func (hs Holders) UsesPayload() bool {
	for _, h := range hs {
		if p, ok := h.(payloadHolder); ok && p.UsesPayload() {
			return true
		}
	}
	return false
}
