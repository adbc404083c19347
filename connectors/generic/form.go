package generic

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"slices"

	"github.com/signalgate/signalgate/connectors"
)

// formDocument reads a form-encoded body (Twilio's) as the flat document its mapping
// reads and its notification's payload stores: a JSON object of each field's name
// and value, values as strings. The raw body is kept with the event: it is what the
// signature was checked over, and what a replay reads again.
//
// A field sent twice makes the body unreadable. Twilio's libraries disagree on what
// a signature over a repeated name covers (twilio-go signs its first value,
// twilio-node and twilio-python every value), so another value may be one nobody
// signed; Twilio's own webhooks send each name once (media as MediaUrl0, MediaUrl1…).
func formDocument(body []byte) (doc map[string]any, payload []byte, err error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, nil, errors.New("malformed form body")
	}
	doc = make(map[string]any, len(form))
	for _, k := range slices.Sorted(maps.Keys(form)) {
		if n := len(form[k]); n > 1 {
			return nil, nil, fmt.Errorf("form: field %q sent %d times (each field once)", connectors.Truncate(k, 64), n)
		}
		doc[k] = form[k][0]
	}
	payload, err = json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("form: %w", err)
	}
	return doc, payload, nil
}

// sentJSON reports whether the sender labelled its body JSON: a form preset's sender
// may post JSON too (Twilio signs such a body through the URL's bodySHA256).
func sentJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
