package github

import (
	"net/http"
	"testing"
)

// FuzzServe drives signature verification and payload parsing through the real handler:
// whatever arrives, the answer is a 2xx or 4xx, never a panic or a 500; a verified body
// is never a 400.
func FuzzServe(f *testing.F) {
	f.Add("issue_comment", `{"action":"created","issue":{"number":1,"title":"t"},"comment":{"id":2,"body":"@octocat hi","user":{"login":"a"}},"repository":{"full_name":"o/r"}}`, uint8(0))
	f.Add("pull_request", `{"action":"opened","number":3,"pull_request":{"number":3,"title":"x","user":{"login":"a"}},"repository":{"full_name":"o/r"}}`, uint8(0))
	f.Add("check_run", `{"action":"completed","check_run":{"conclusion":"failure","head_sha":"abc","name":"ci"},"repository":{"full_name":"o/r"}}`, uint8(0))
	f.Add("workflow_run", `{"action":"completed","workflow_run":{"conclusion":null}}`, uint8(0))
	f.Add("push", `{"ref":"refs/heads/main","commits":[{"id":"1","message":"m"}],"repository":{"full_name":"o/r"}}`, uint8(1))
	f.Add("ping", `{"zen":"x"}`, uint8(0))
	f.Add("issues", `{"action":"opened","issue":{"number":-1,"labels":[null]}}`, uint8(2))
	f.Add("", `[]`, uint8(0))
	f.Add("issue_comment", "payload=%7B%7D", uint8(3))
	f.Add("release", "{\"release\":{\"body\":\"\xff\x00\"}}", uint8(0))
	f.Fuzz(func(t *testing.T, event, body string, mode uint8) {
		h := newHarness(t, testConfig(), 1<<20)
		req := newDelivery("acme", event, "d-1", []byte(body))
		switch mode % 4 {
		case 1: // a wrong signature
			req.Header.Set("X-Hub-Signature-256", sign("other", []byte(body)))
		case 2: // a garbled header
			req.Header.Set("X-Hub-Signature-256", "sha256="+body)
		case 3: // a form-encoded delivery
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := h.do(req)
		if mode%4 != 1 && mode%4 != 2 && event != "" && rec.Code == http.StatusBadRequest {
			t.Fatalf("%s %q: a verified body answered 400: %s", event, body, rec.Body.String())
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", event, body, rec.Code, rec.Body.String())
		}
		// Without an event type the request is refused (400) before verification.
		if mode%4 == 1 && event != "" && rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong signature answered %d", rec.Code)
		}
	})
}
