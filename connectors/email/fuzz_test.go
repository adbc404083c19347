package email

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseMessage: any bytes, wrapped in nest levels of multipart, either are an
// error (empty, or over a parse limit) or map to an item with a summary line; no
// input panics, nesting beyond maxDepth is always refused, and the payload's lists
// and the parse notes stay bounded.
func FuzzParseMessage(f *testing.F) {
	for _, raw := range []string{plainMail, htmlMail, attachmentMail, quotedMail, latin1Mail} {
		f.Add([]byte(crlf(raw)), false, uint8(0))
	}
	f.Add([]byte(mailWith("X-Priority: 1\nAuto-Submitted: auto-replied\n")), true, uint8(0))
	f.Add([]byte("Subject: =?utf-8?B?////?=\r\nContent-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n"), false, uint8(0))
	f.Add([]byte("From: <\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!"), true, uint8(0))
	f.Add([]byte("\r\n\r\n"), false, uint8(0))
	f.Add([]byte("From someone Mon Jan  1 00:00:00 2026\r\nnot a field\r\n folded\r\nFrom: a@b\r\nno separator\r\n"), false, uint8(0))
	f.Add([]byte("Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: inner\r\n\r\nhi\r\n--d--\r\n"), false, uint8(0))
	f.Add([]byte("Content-Type: message/rfc822\r\n\r\nContent-Type: text/html\r\n\r\n<p>fwd</p>"), false, uint8(3))
	f.Add([]byte(deepMultipart(maxDepth-2, "")), false, uint8(2))
	f.Add([]byte(crlf(plainMail)), false, uint8(maxDepth+1))
	f.Add([]byte(manyParts(60)), false, uint8(1))
	cfg := testMapConfig()
	f.Fuzz(func(t *testing.T, raw []byte, truncated bool, nest uint8) {
		msg := nested(raw, int(nest))
		m, err := parseMessage(msg, truncated, fixedClock)
		if int(nest) > maxDepth && !bytes.Contains(raw, []byte(fuzzBoundary)) {
			if !errors.Is(err, errLimit) {
				t.Fatalf("%d levels of nesting read: %v", nest, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, errLimit) && len(bytes.TrimSpace(msg)) > 0 {
				t.Fatalf("only empty or over-limit messages are unreadable, got %v for %q", err, msg)
			}
			return
		}
		if len(m.Attachments) > maxListed || len(m.Notes.all()) > maxNotes+1 {
			t.Fatalf("%d attachments listed, %d notes", len(m.Attachments), len(m.Notes.all()))
		}
		item := cfg.item(m, "INBOX", 1, deliveryID(m.MessageID, msg, 1, 1, "INBOX"))
		if item.Summary == "" {
			t.Fatalf("empty summary for %q", msg)
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(item.Payload, &p); err != nil {
			t.Fatalf("payload: %v", err)
		}
		for _, k := range []string{"to", "cc", "references", "in_reply_to", "attachments"} {
			var list []json.RawMessage
			if _, ok := p[k]; ok && (json.Unmarshal(p[k], &list) != nil || len(list) > maxListed) {
				t.Fatalf("payload %s: %d entries (or not a list): %s", k, len(list), p[k])
			}
		}
	})
}

const fuzzBoundary = "=_sg_fuzz_"

// nested wraps raw (a whole message, its header included) in levels multipart
// entities, raw being the innermost part.
func nested(raw []byte, levels int) []byte {
	if levels == 0 {
		return raw
	}
	var b strings.Builder
	b.WriteString("From: fuzz@example.com\r\n")
	for i := range levels {
		fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"%s%d\"\r\n\r\n--%s%d\r\n", fuzzBoundary, i, fuzzBoundary, i)
	}
	b.Write(raw)
	for i := levels - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "\r\n--%s%d--\r\n", fuzzBoundary, i)
	}
	return []byte(b.String())
}
