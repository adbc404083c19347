package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What the inbox stores. An event and its notifications are made storable on both
// backends, whichever connector or API they came from, before the store sees them: text
// is cleaned (PostgreSQL refuses NUL and invalid UTF-8), payloads stay valid JSON, and
// request values bound for an index are bounded (see bounds.go).

// StoredKey is a provider delivery id, or a dedupe, coalesce or net key, as it is stored
// and looked up: clean text, hashed when over MaxKeyBytes (equal keys stay equal, so
// redeliveries and merges still work).
func StoredKey(k string) string { return HashKey(CleanText(k)) }

// Stored is n as the inbox stores it: its thread ids, labels and states clean text, its
// keys StoredKey, its summary and deliverAs clean text and its payload valid UTF-8.
// Lookups by a notification's keys (the record it would merge into) take it so.
func (n Notification) Stored() Notification {
	for _, f := range []*string{&n.Thread.Agent, &n.Thread.Resource, &n.Thread.Thread, &n.Route, &n.Source, &n.Kind,
		&n.State, &n.RestState, &n.Summary, &n.DeliverAs} {
		*f = CleanText(*f)
	}
	n.DedupeKey, n.CoalesceKey, n.NetKey = StoredKey(n.DedupeKey), StoredKey(n.CoalesceKey), StoredKey(n.NetKey)
	n.Payload = CleanJSON(n.Payload)
	return n
}

// CleanJSON keeps valid JSON valid and storable: invalid UTF-8 can only sit inside its
// strings, where U+FFFD replaces it; a raw NUL cannot occur in valid JSON at all.
func CleanJSON(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	return json.RawMessage(bytes.ToValidUTF8(raw, []byte("\uFFFD")))
}

// storable makes ev and ns what the inbox stores. Over-long delivery ids and
// dedupe/coalesce keys are replaced by their hash; an event whose notifications name a
// thread, source, kind or route too long to index is stored as invalid with no records,
// never failed (a failure is retried forever by IMAP and answered 500 over HTTP). It
// returns the notifications to store.
func storable(ev *Event, ns []Notification) []Notification {
	ev.DeliveryID = StoredKey(ev.DeliveryID)
	ev.Type, ev.Error, ev.Connector = CleanText(ev.Type), CleanText(ev.Error), CleanText(ev.Connector)
	var errs []error
	if src := CleanText(ev.Source); len(src) > MaxLabelBytes {
		errs = append(errs, fmt.Errorf("event source: %d bytes, over the limit of %d", len(src), MaxLabelBytes))
		ev.Source = truncateText(src, MaxLabelBytes)
	} else {
		ev.Source = src
	}
	out := make([]Notification, 0, len(ns))
	for i, n := range ns {
		n = n.Stored()
		if err := n.CheckBounds(); err != nil {
			if n.Route != "" { // a template rendered it: name the config entry to fix
				err = fmt.Errorf("route %q: %w", n.Route, err)
			}
			errs = append(errs, fmt.Errorf("notification %d: %w", i, err))
		}
		out = append(out, n)
	}
	if len(errs) > 0 {
		ev.Status = EventInvalid
		ev.Error = strings.ReplaceAll(errors.Join(errs...).Error(), "\n", "; ")
		return nil
	}
	return out
}

// truncateText cuts s to at most n bytes without splitting a character.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
