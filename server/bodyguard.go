package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// slotWait is how long a request waits for a body slot before it is answered 503: long
// enough to absorb a burst of honest senders, short enough that waiting requests (which
// have not read their bodies yet) hold no memory for long.
const slotWait = time.Second

// retryAfterBusy is the Retry-After of a 503 for too many bodies being read.
const retryAfterBusy = 5

// lingerAfterRefusal is how long the server still reads a refused body after its answer
// before closing: enough for bytes already in flight, too short for a slow sender to
// hold the connection.
const lingerAfterRefusal = time.Second

// bodyGuard bounds request bodies in time and in number. A body must arrive within its
// deadline (a stranger sending one byte a second holds neither a connection nor a buffer
// for long), and at most cap bodies are being received at once, because each holds
// memory as it arrives; beyond that the request is answered 503 with Retry-After.
type bodyGuard struct {
	slots   chan struct{}
	timeout time.Duration
	wait    time.Duration
}

func newBodyGuard(cfg Config) *bodyGuard {
	return &bodyGuard{slots: make(chan struct{}, cfg.MaxBodyReads), timeout: cfg.BodyTimeout, wait: slotWait}
}

// deadline is the first thing a request meets, before routing, so it holds for every
// route, unknown paths and methods not allowed included: a request with a body gets
// server.body_timeout from now to send it. That one deadline bounds every read of the
// body, the handler's and the server's own discard of what a handler left unread.
// A refusal (any error answer) given before the body was read in full closes the
// connection rather than waiting on the rest.
func (g *bodyGuard) deadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		rc := http.NewResponseController(c.Response())
		deadline := time.Now().Add(g.timeout)
		if err := rc.SetReadDeadline(deadline); err != nil {
			if errors.Is(err, http.ErrNotSupported) {
				return next(c) // no connection (tests' recorders)
			}
			return fmt.Errorf("set body read deadline: %w", err)
		}
		body := &trackedBody{ReadCloser: req.Body}
		req.Body = body
		// Put back once the chain returns (the error handler writes after that): net/http
		// then checks whether the body is its own one it gave up reading, and if so waits
		// briefly before closing, so a reset does not destroy the answer.
		defer func() { req.Body = body.ReadCloser }()
		c.Response().Before(func() {
			if c.Response().Status < http.StatusBadRequest || body.eof.Load() {
				return
			}
			// Without Connection: close, net/http would read up to 256 KB of the body
			// before sending the answer. With it, the answer goes out at once, and the
			// server then reads what the sender already has in flight (so closing does not
			// reset the connection under the answer) for at most lingerAfterRefusal.
			c.Response().Header().Set(echo.HeaderConnection, "close")
			if linger := time.Now().Add(lingerAfterRefusal); linger.Before(deadline) {
				_ = rc.SetReadDeadline(linger) // best effort: the body deadline still holds
			}
		})
		return next(c)
	}
}

// middleware caps the bodies being received at once. Streams are exempt by route only:
// they read no body and stay open.
func (g *bodyGuard) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if IsStream(c) || req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		if !g.acquire(req.Context()) {
			c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterBusy))
			busy := NewError(http.StatusServiceUnavailable, "unavailable", "too many request bodies are being received; retry later")
			busy.expected = true
			return busy
		}
		b := &guardedBody{ReadCloser: req.Body, release: func() { <-g.slots }}
		req.Body = b
		defer b.finish()
		return next(c)
	}
}

func (g *bodyGuard) acquire(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// trackedBody records whether the body was read to its end, which net/http reports with
// the last bytes.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// guardedBody gives its slot back once the body is read, fails or the handler returns.
// At EOF net/http itself clears the read deadline as it starts watching the connection
// for a client going away (a deadline there would cancel the handler's context). A body
// left unread keeps its deadline, so the server's discard of the rest after the handler
// is bounded too.
type guardedBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.finish()
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.finish()
		return n, NewError(http.StatusRequestTimeout, "request_timeout", "request body not received within server.body_timeout")
	case err != nil:
		b.finish()
	}
	return n, err
}

func (b *guardedBody) finish() { b.once.Do(b.release) }
