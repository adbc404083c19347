// Package httptarget is what the HTTP-reached targets (mastra, webhook) share: one JSON
// POST with a timeout, and the classification of its outcome the dispatcher retries by
// (2xx accepted; 408, 409, 425, 429, 5xx and transport failures retried, honouring
// Retry-After; any other status failed for good), with credentials kept out of error messages.
package httptarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/attempt"
	"github.com/signalgate/signalgate/telemetry"
)

// Retryable reports whether status may succeed later: timeouts, conflicts, too early,
// throttling, server errors. Any other answer is permanent.
func Retryable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

// maxBody bounds what is read of a response.
const maxBody = 1 << 20

// NoRedirects returns a copy of c that never follows a redirect: a 3xx comes back as the
// answer. Following one would resend the signed body and the target's secret headers to
// wherever the target points, another host included; a 3xx is a failed attempt instead.
func NoRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{}
	}
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// Traced is c (nil: a default client) with every request a client span of tp that
// carries its traceparent: for the gateway's own agents (Mastra, webhook receivers),
// never third parties. The span's url.full is what SafeURL shows (scheme and host): a
// target's path, query and userinfo may be its credential, and spans leave the gateway
// for the tracing backend. With tracing off it is c itself.
func Traced(c *http.Client, tp trace.TracerProvider, opts ...telemetry.TransportOption) *http.Client {
	if !telemetry.Enabled(tp) {
		return c
	}
	if c == nil {
		c = &http.Client{}
	}
	cc := *c
	opts = append([]telemetry.TransportOption{telemetry.WithURL(spanURL)}, opts...)
	cc.Transport = telemetry.Transport(c.Transport, tp, opts...)
	return &cc
}

// spanURL is the url.full of a target request's span.
func spanURL(u *url.URL) string { return SafeURL(u.String()) }

// Post sends body to u with headers and the JSON content type, bounded by timeout, and
// returns the response body and status of a 2xx answer. A failure is an
// *agent.DeliveryError (its status, whether a later attempt may help, the Retry-After),
// or a plain error for a request that cannot be built; the error never contains URL
// userinfo, the path, the query string or header values, not even where the answer's
// excerpt repeats them.
func Post(ctx context.Context, c *http.Client, u string, headers map[string]string, body []byte, timeout time.Duration, now func() time.Time) ([]byte, agent.Result, error) {
	hdr := map[string]string{"Content-Type": "application/json"}
	maps.Copy(hdr, headers)
	return exchange(ctx, c, http.MethodPost, u, hdr, bytes.NewReader(body), timeout, now)
}

// Get reads u as Post sends to it: bounded by timeout, never following a redirect, its
// errors classified and hiding the URL.
func Get(ctx context.Context, c *http.Client, u string, headers map[string]string, timeout time.Duration, now func() time.Time) ([]byte, agent.Result, error) {
	return exchange(ctx, c, http.MethodGet, u, headers, nil, timeout, now)
}

func exchange(ctx context.Context, c *http.Client, method, u string, hdr map[string]string, body io.Reader, timeout time.Duration, now func() time.Time) ([]byte, agent.Result, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	shown := SafeURL(u)
	resp, err := send(ctx, c, method, u, shown, hdr, body)
	if err != nil {
		return nil, agent.Result{}, err
	}
	defer resp.Body.Close()
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// The target accepted; an unreadable answer does not undo that.
		_ = rerr
		return raw, agent.Result{Status: resp.StatusCode}, nil
	}
	msg := fmt.Sprintf("%s %s: HTTP %d", method, shown, resp.StatusCode)
	if snippet := newHider(u, hdr).excerpt(raw); snippet != "" {
		msg += ": " + snippet
	}
	return nil, agent.Result{}, &agent.DeliveryError{Err: errors.New(msg), Status: resp.StatusCode,
		Retry: Retryable(resp.StatusCode), RetryAfter: attempt.ParseRetryAfter(resp.Header.Get("Retry-After"), now())}
}

// SafeURL is what errors, logs and the attempt log show of a target URL: its scheme and
// host. Userinfo, path and query all stay out: a target's path or query often is its
// credential (a webhook URL with a token in it).
func SafeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "(target URL)"
	}
	shown := p.Scheme + "://" + p.Host
	if (p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" {
		shown += "/…"
	}
	return shown
}

// scrub removes the URL, and the parts of it SafeURL hides, from a transport error.
func scrub(msg, full, shown string) string {
	msg = strings.ReplaceAll(msg, full, shown)
	p, err := url.Parse(full)
	if err != nil {
		return msg
	}
	if p.User != nil {
		msg = strings.ReplaceAll(msg, p.User.String()+"@", "")
	}
	for _, part := range []string{p.RawQuery, p.EscapedPath(), p.Path} {
		if len(part) > 1 {
			msg = strings.ReplaceAll(msg, part, "/…")
		}
	}
	return msg
}

// CheckURL is the check of an HTTP target's URL under key: required for kind, and an
// http(s) URL with a host.
func CheckURL(key, u, kind string) error {
	if u == "" {
		return fmt.Errorf("%s: required for kind %s", key, kind)
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s: want an http(s) URL", key)
	}
	return nil
}
