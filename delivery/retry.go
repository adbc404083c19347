package delivery

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signalgate/signalgate/agent"
)

// Backoff bounds.
const (
	BackoffBase = time.Second
	BackoffCap  = 10 * time.Minute
	// MaxRetryAfter caps a target's Retry-After hint, so a bogus value cannot park a
	// record for days.
	MaxRetryAfter = time.Hour
)

// NextAttemptAt is when attempt number attempts+1 may run after attempts failed ones:
// exponential backoff (1s, 2s, 4s, … capped at 10 min) with jitter drawing the wait from
// [d/2, d) so retries of many records spread out. rnd returns a value in [0, 1).
func NextAttemptAt(now time.Time, attempts int, rnd func() float64) time.Time {
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

// retryAfter is when failure f asks for the next attempt, capped at MaxRetryAfter; false
// when the target gave no hint and the backoff applies.
func retryAfter(f agent.DeliveryError, now time.Time) (time.Time, bool) {
	if f.RetryAfter <= 0 {
		return time.Time{}, false
	}
	return now.Add(min(f.RetryAfter, MaxRetryAfter)), true
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
