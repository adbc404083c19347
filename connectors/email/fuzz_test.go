package email

import "testing"

// FuzzParseMessage: any bytes either fail to parse with an error or map to an item; no
// input panics, and a parsed message always yields a summary line.
func FuzzParseMessage(f *testing.F) {
	for _, raw := range []string{plainMail, htmlMail, attachmentMail, quotedMail, latin1Mail} {
		f.Add([]byte(crlf(raw)), false)
	}
	f.Add([]byte(mailWith("X-Priority: 1\nAuto-Submitted: auto-replied\n")), true)
	f.Add([]byte("Subject: =?utf-8?B?////?=\r\nContent-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n"), false)
	f.Add([]byte("From: <\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!"), true)
	f.Add([]byte("\r\n\r\n"), false)
	cfg := testMapConfig()
	f.Fuzz(func(t *testing.T, raw []byte, truncated bool) {
		m, err := parseMessage(raw, truncated, fixedClock)
		if err != nil {
			return
		}
		item := cfg.item(m, "INBOX", 1, deliveryID(m.MessageID, raw, 1, 1, "INBOX"))
		if item.Summary == "" {
			t.Fatalf("empty summary for %q", raw)
		}
	})
}
