package generic

import (
	"testing"
)

// FuzzServe: whatever a correctly signed sender posts, native body, envelope or
// garbage, it is stored and answered 2xx: never a 400 (the sender would retry
// forever), a 500 or a panic.
func FuzzServe(f *testing.F) {
	f.Add(notificationJSON, false)
	f.Add(`{"type": "example.event", "timestamp": "2022-11-03T20:26:10.344522Z", "data": {"foo": "bar", "fizzbuzz": 2}}`, false)
	f.Add(`{"type": "contact.created", "data": {"title": "<b>x</b>", "number": 7, "repo": "a/b", "nested": {"a": [1]}}}`, true)
	f.Add(`{"type": null, "data": null}`, false)
	f.Add(`{"kind": "x", "attributes": {"a": {"b": 1}}}`, true)
	f.Add(`[]`, false)
	f.Add("{\"type\": \"\xff\", \"data\": {\"summary\": \"\x00\"}}", true)
	f.Fuzz(func(t *testing.T, body string, mapped bool) {
		cfg := Config{Name: "billing", Secret: testSecret}
		if mapped {
			cfg.Mapping = &Mapping{Kind: "$.type", Summary: "$.data.title", Fields: map[string]string{"customer": "$.data.customer"}}
		}
		h := newHarness(t, 1<<20, cfg)
		rec := h.post(t, "msg_1", body)
		if rec.Code != 200 && rec.Code != 202 {
			t.Fatalf("%q: status %d: %s", body, rec.Code, rec.Body.String())
		}
	})
}
