package delivery

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
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

// retryAfterError carries a target's hint of when to try again.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.err, e.after)
}
func (e *retryAfterError) Unwrap() error             { return e.err }
func (e *retryAfterError) RetryAfter() time.Duration { return e.after }

// RetryAfter wraps err with a hint that the target wants the next attempt no sooner than
// d from now (an HTTP Retry-After). The dispatcher honours it instead of its backoff.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}

// retryAfterOf finds a retry-after hint anywhere in err's chain: any error with a
// RetryAfter() time.Duration method counts, so targets need not import this package.
func retryAfterOf(err error) (time.Duration, bool) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		d := ra.RetryAfter()
		switch {
		case d < 0:
			d = 0
		case d > MaxRetryAfter:
			d = MaxRetryAfter
		}
		return d, true
	}
	return 0, false
}

// statusCodeOf finds an HTTP status in err's chain (an error with StatusCode() int).
func statusCodeOf(err error) int {
	var sc interface{ StatusCode() int }
	if errors.As(err, &sc) {
		return sc.StatusCode()
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
