package slack

import (
	"net/http"
	"strconv"
	"testing"
)

// FuzzServe drives v0 verification and Events API parsing through the real handler: any
// body and header values give a 2xx or 4xx, never a panic or a 500, and only a correct
// signature inside the window passes.
func FuzzServe(f *testing.F) {
	f.Add(`{"type":"event_callback","team_id":"T0001","event_id":"Ev1","event":{"type":"message","channel_type":"im","channel":"D1","user":"U061F7AUR","text":"hi","ts":"1.1"}}`, int64(0), uint8(0))
	f.Add(`{"type":"url_verification","challenge":"c"}`, int64(0), uint8(0))
	f.Add(`{"type":"event_callback","event":{"type":"app_mention","text":"<@U0BOT> x","blocks":[{"type":"rich_text","elements":[null]}]}}`, int64(0), uint8(0))
	f.Add(`{"type":"app_rate_limited"}`, int64(0), uint8(0))
	f.Add(`{"type":"event_callback","event":"nope"}`, int64(-400), uint8(1))
	f.Add(`not json`, int64(0), uint8(2))
	f.Add("{\"type\":\"event_callback\",\"event\":{\"type\":\"message\",\"text\":\"\xff\"}}", int64(1<<40), uint8(3))
	f.Fuzz(func(t *testing.T, body string, skew int64, mode uint8) {
		h := newHarness(t, testConfig(), harnessOpts{limit: 1 << 20})
		ts := h.clock.Now().Unix()
		req := newSignedRequest("acme", []byte(body), ts+skew)
		switch mode % 4 {
		case 1:
			req.Header.Set(HeaderSignature, sign("other", ts+skew, []byte(body)))
		case 2:
			req.Header.Set(HeaderSignature, "v0="+body)
		case 3:
			req.Header.Set(HeaderTimestamp, body)
		}
		rec := h.do(req)
		if rec.Code >= 500 {
			t.Fatalf("%q: status %d: %s", body, rec.Code, rec.Body.String())
		}
		inWindow := skew <= int64(SignatureWindow.Seconds()) && skew >= -int64(SignatureWindow.Seconds())
		if (mode%4 == 1 || !inWindow) && rec.Code != http.StatusUnauthorized {
			t.Fatalf("mode %d skew %s answered %d", mode%4, strconv.FormatInt(skew, 10), rec.Code)
		}
	})
}
