// Package attempt is what every outbound call the gateway retries shares: when the next
// attempt may run (exponential backoff with jitter, as a pure function of the attempts so
// far), how far a server's Retry-After is believed, and the error text an attempt records,
// with credentials redacted. The dispatcher (signals to agents) and the reply outbox
// (answers to platforms) both use it, so a record and a reply back off alike.
package attempt

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Backoff bounds.
const (
	BackoffBase = time.Second
	BackoffCap  = 10 * time.Minute
	// MaxRetryAfter caps a server's Retry-After hint, so a bogus value cannot park a
	// record or a reply for days.
	MaxRetryAfter = time.Hour
)

// NextAt is when attempt number attempts+1 may run after attempts failed ones:
// exponential backoff (1s, 2s, 4s, … capped at 10 min) with jitter drawing the wait from
// [d/2, d) so retries of many records spread out. rnd returns a value in [0, 1).
func NextAt(now time.Time, attempts int, rnd func() float64) time.Time {
	if attempts < 1 {
		attempts = 1
	}
	d := BackoffCap
	if attempts <= 30 { // beyond that the shift overflows long before; the cap applies anyway
		if b := BackoffBase << (attempts - 1); b < BackoffCap {
			d = b
		}
	}
	f := rnd()
	if f < 0 || f >= 1 {
		f = 0
	}
	return now.Add(d/2 + time.Duration(f*float64(d/2)))
}

// After is when a server that asked to wait d may be tried again, capped at
// MaxRetryAfter; false when d is no hint (zero or negative) and the backoff applies.
func After(d time.Duration, now time.Time) (time.Time, bool) {
	if d <= 0 {
		return time.Time{}, false
	}
	return now.Add(min(d, MaxRetryAfter)), true
}

// ParseRetryAfter reads an HTTP Retry-After value, delay-seconds or an HTTP date; 0 when
// absent or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// maxErrorLen bounds a stored error message.
const maxErrorLen = 1000

var (
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@`)
	secretParam = regexp.MustCompile(`(?i)([?&;](?:access_token|token|secret|key|api_key|apikey|password|passwd|pwd|sig|signature|auth|code)=)[^&\s"']+`)
	authScheme  = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`)
	whsec       = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)
)

// Redact removes credentials from an error message before it is stored or logged: URL
// userinfo, secret-looking query parameters, Authorization values, webhook secrets and
// every configured secret verbatim. The result is capped at 1000 bytes.
func Redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	msg = urlUserinfo.ReplaceAllString(msg, "${1}xxxxx@")
	msg = secretParam.ReplaceAllString(msg, "${1}xxxxx")
	msg = authScheme.ReplaceAllString(msg, "$1 xxxxx")
	msg = whsec.ReplaceAllString(msg, "whsec_xxxxx")
	if len(msg) > maxErrorLen {
		cut := maxErrorLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
