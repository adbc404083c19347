package session

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// Dialect is how a vendor's library verifies the session webhooks: the gateway takes
// exactly the deliveries that library's webhooks.unwrap takes.
type Dialect int

const (
	// OpenAIDialect is the openai library's: each signature with or without its "v1,"
	// prefix, the HMAC over the timestamp header as sent.
	OpenAIDialect Dialect = iota
	// StandardDialect is the standardwebhooks library's (Anthropic's unwrap): "v1,"
	// required, the HMAC over the timestamp as the integer it reads.
	StandardDialect
)

// Verify checks a session webhook signed with key (the decoded whsec_ secret) as d's
// library does: the three Standard Webhooks headers, a timestamp (leading decimal
// digits, as parseInt reads them) within five minutes of now either way, and any
// matching signature.
func Verify(d Dialect, key []byte, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get(stdwebhooks.HeaderID), h.Get(stdwebhooks.HeaderTimestamp), h.Get(stdwebhooks.HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return stdwebhooks.ErrMissingHeaders
	}
	sec, ok := leadingInt(ts)
	if !ok {
		return stdwebhooks.ErrTimestampFormat
	}
	if diff := now.Sub(time.Unix(sec, 0)); diff > stdwebhooks.Tolerance || diff < -stdwebhooks.Tolerance {
		return stdwebhooks.ErrTimestamp
	}
	signed := ts
	var cands []string
	for _, s := range strings.Split(sigs, " ") {
		if s == "" {
			continue
		}
		if d == OpenAIDialect && !strings.HasPrefix(s, "v1,") {
			s = "v1," + s
		}
		cands = append(cands, s)
	}
	if d == StandardDialect {
		signed = strconv.FormatInt(sec, 10)
	}
	if _, err := strconv.ParseInt(signed, 10, 64); err != nil {
		return stdwebhooks.ErrSignature // a timestamp text the HMAC cannot be checked over here
	}
	hdr := http.Header{}
	hdr.Set(stdwebhooks.HeaderID, id)
	hdr.Set(stdwebhooks.HeaderTimestamp, signed)
	hdr.Set(stdwebhooks.HeaderSignature, strings.Join(cands, " "))
	// The window was checked above, on the timestamp as read.
	return stdwebhooks.Verify(key, hdr, body, time.Unix(sec, 0))
}

// leadingInt reads s as JavaScript's parseInt(s, 10) does for a timestamp: optional
// leading spaces and sign, then the leading decimal digits.
func leadingInt(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\r")
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:j], 10, 64)
	return n, err == nil
}
