package httptarget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/signalgate/signalgate/agent"
)

// Ask sends a bodiless request (GET, HEAD, OPTIONS) to u with headers, bounded by
// timeout and never following a redirect, and returns the answer's status. The error,
// for a request that got no answer, hides the URL as Post's do.
func Ask(ctx context.Context, c *http.Client, method, u string, headers map[string]string, timeout time.Duration) (int, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := send(ctx, c, method, u, SafeURL(u), headers, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// send makes one request that never follows a redirect. Errors show the URL as shown:
// an *agent.DeliveryError when no answer came (worth retrying), a plain error for a
// request that cannot be built.
func send(ctx context.Context, c *http.Client, method, u, shown string, headers map[string]string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: bad request: %s", method, shown, scrub(err.Error(), u, shown))
	}
	req.Header.Set("User-Agent", "signalgate")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := NoRedirects(c).Do(req)
	if err != nil {
		// *url.Error repeats the URL (query included); the cause alone says what failed.
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		msg := scrub(cause.Error(), u, shown)
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "timed out"
		}
		return nil, &agent.DeliveryError{Err: fmt.Errorf("%s %s: %s", method, shown, msg), Retry: true}
	}
	return resp, nil
}
