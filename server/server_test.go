package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/server/servertest"
)

const failsafe = servertest.Failsafe

func startServer(t *testing.T, cfg Config, mount func(e *echo.Echo)) (*Server, string) {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	s := New(cfg, slog.New(slog.DiscardHandler))
	mount(s.Echo())
	addr, err := s.Listen()
	require.NoError(t, err)
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, addr.String()
}

// rawRequest opens a connection and sends head and the first part of a body.
func rawRequest(t *testing.T, addr, head, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = io.WriteString(conn, head+"\r\n"+body)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(failsafe)))
	return conn
}

// readAnswer reads one response, then (closed) waits for the server to close the
// connection.
func readAnswer(t *testing.T, conn net.Conn, closed bool) (*http.Response, []byte) {
	t.Helper()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "the server must answer before the failsafe")
	body, _ := io.ReadAll(resp.Body)
	if closed {
		_, err = br.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the server must close the connection")
	}
	return resp, body
}

func readAll(c echo.Context) error {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	return c.String(http.StatusOK, fmt.Sprint(len(b)))
}

// A body sent a byte at a time (here: 10 bytes, then nothing) loses its connection
// once server.body_timeout passes, whatever it asks for in its headers.
func TestSlowBodyConnectionClosedWithinBound(t *testing.T) {
	_, addr := startServer(t, Config{BodyTimeout: 200 * time.Millisecond}, func(e *echo.Echo) {
		e.POST("/webhooks/generic/:connector", readAll)
	})
	for _, accept := range []string{"application/json", "text/event-stream"} {
		conn := rawRequest(t, addr, "POST /webhooks/generic/billing HTTP/1.1\r\nHost: x\r\nAccept: "+accept+"\r\nContent-Length: 1000\r\n", "0123456789")
		resp, body := readAnswer(t, conn, true)
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, accept)
		require.Contains(t, string(body), "request body not received within server.body_timeout")
	}
	// A handler that never reads the body does not let it stall either: the server's
	// discard of the rest is bounded by the same deadline.
	_, addr = startServer(t, Config{BodyTimeout: 200 * time.Millisecond}, func(e *echo.Echo) {
		e.POST("/ignore", func(c echo.Context) error { return c.NoContent(http.StatusUnauthorized) })
	})
	conn := rawRequest(t, addr, "POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n", "0123456789")
	resp, _ := readAnswer(t, conn, true)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// A handler keeps working past body_timeout once its body is in (or when it has none):
// the deadline is for receiving, and net/http's watch for a vanished client, which reads
// the connection while the handler runs, must not inherit it.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	const bodyTimeout = 100 * time.Millisecond
	_, addr := startServer(t, Config{BodyTimeout: bodyTimeout}, func(e *echo.Echo) {
		slow := func(c echo.Context) error {
			if _, err := io.ReadAll(c.Request().Body); err != nil {
				return err
			}
			select {
			case <-c.Request().Context().Done():
				return c.NoContent(http.StatusServiceUnavailable)
			case <-time.After(3 * bodyTimeout): // the work outlives the body deadline
			}
			return c.NoContent(http.StatusNoContent)
		}
		e.POST("/slow", slow)
		e.GET("/slow", slow)
	})
	resp, err := http.Post("http://"+addr+"/slow", "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, err = http.Get("http://" + addr + "/slow")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func TestIdleConnectionClosed(t *testing.T) {
	_, addr := startServer(t, Config{IdleTimeout: 200 * time.Millisecond}, func(e *echo.Echo) {
		e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	})
	conn := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "")
	resp, _ := readAnswer(t, conn, true) // answered, then closed once idle
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// Stalled bodies hold at most max_body_reads slots; the next body is turned away with 503
// and Retry-After, requests without a body are not held up, and a slot comes back as soon
// as its body has arrived (before the handler finishes).
func TestBodiesBeingReadAreCapped(t *testing.T) {
	entered, bodyRead := make(chan struct{}, 16), make(chan string, 16)
	var mu sync.Mutex
	hold := map[string]chan struct{}{}
	_, addr := startServer(t, Config{MaxBodyReads: 2, BodyTimeout: failsafe}, func(e *echo.Echo) {
		e.POST("/in/:id", func(c echo.Context) error {
			entered <- struct{}{}
			b, err := io.ReadAll(c.Request().Body)
			if err != nil {
				return err
			}
			bodyRead <- c.Param("id")
			mu.Lock()
			ch := hold[c.Param("id")]
			mu.Unlock()
			if ch != nil {
				<-ch
			}
			return c.String(http.StatusOK, fmt.Sprint(len(b)))
		})
		e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	})
	stalled := []net.Conn{
		rawRequest(t, addr, "POST /in/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n", strings.Repeat("x", 1000)),
		rawRequest(t, addr, "POST /in/b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n", "3e8\r\n"+strings.Repeat("x", 1000)+"\r\n"),
	}
	<-entered
	<-entered

	resp, err := http.Post("http://"+addr+"/in/c", "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, string(body))
	require.Equal(t, "5", resp.Header.Get("Retry-After"))
	require.Len(t, entered, 0, "the refused request never reached its handler")

	resp, err = http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "a request without a body takes no slot")

	// The first stalled body completes; its handler keeps working, but its slot is free.
	release := make(chan struct{})
	mu.Lock()
	hold["a"] = release
	mu.Unlock()
	_, err = io.WriteString(stalled[0], strings.Repeat("y", 999000))
	require.NoError(t, err)
	require.Equal(t, "a", <-bodyRead)
	resp, err = http.Post("http://"+addr+"/in/d", "application/json", bytes.NewReader([]byte(`{"b":2}`)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "d", <-bodyRead)
	close(release)
	resp, body = readAnswer(t, stalled[0], false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "1000000", string(body))
}

// Only the route decides whether a request is a stream: an Accept header on an ordinary
// route keeps its timeouts.
func TestStreamExemptionIsByRouteOnly(t *testing.T) {
	_, addr := startServer(t, Config{RequestTimeout: 100 * time.Millisecond}, func(e *echo.Echo) {
		e.POST("/webhooks/generic/:connector", func(c echo.Context) error {
			<-c.Request().Context().Done()
			return c.Request().Context().Err()
		})
	})
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhooks/generic/billing", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	client := &http.Client{Timeout: failsafe}
	resp, err := client.Do(req)
	require.NoError(t, err, "the request timeout must apply")
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	e := echo.New()
	c := e.NewContext(httptestRequest("GET", "/v1/x", "text/event-stream"), nil)
	c.SetPath("/v1/agents/:agent/threads/:resourceId/:threadId/notifications")
	require.False(t, IsStream(c))
	c.SetPath("/v1/agents/:agent/threads/:resourceId/:threadId/stream")
	require.True(t, IsStream(c))
}

func httptestRequest(method, path, accept string) *http.Request {
	r, _ := http.NewRequest(method, path, nil)
	r.Header.Set("Accept", accept)
	return r
}

type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// /readyz is public: it says unavailable, and the cause goes to the log.
func TestReadyzAnswersGenerically(t *testing.T) {
	var logs logSink
	s := New(Config{}, slog.New(slog.NewJSONHandler(&logs, nil)))
	s.Health(func(context.Context) error {
		return errors.New(`failed to connect to host=db.internal user=gw database=gw: password authentication failed`)
	})
	rec := newRecorder()
	s.Echo().ServeHTTP(rec, httptestRequest("GET", "/readyz", ""))
	require.Equal(t, http.StatusServiceUnavailable, rec.code)
	require.JSONEq(t, `{"status":"unavailable"}`, rec.body.String())
	require.Contains(t, logs.buf.String(), "password authentication failed")
}

type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

func TestLoopback(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:8080": true, "127.9.9.9:1": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:1": false, "192.168.1.2:80": false, "example.com:80": false, "nope": false,
	} {
		require.Equal(t, want, Loopback(listen), listen)
	}
}

// A request turned away for want of a slot does not get to stall its connection either:
// the server discards what is left of its body under the same deadline.
func TestRefusedBodyCannotStall(t *testing.T) {
	entered, unblock := make(chan struct{}), make(chan struct{})
	_, addr := startServer(t, Config{MaxBodyReads: 1, BodyTimeout: 300 * time.Millisecond}, func(e *echo.Echo) {
		e.POST("/block", func(c echo.Context) error {
			close(entered)
			<-unblock // holds the only slot without reading
			return c.NoContent(http.StatusNoContent)
		})
		e.POST("/in", readAll)
	})
	defer close(unblock)
	rawRequest(t, addr, "POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n", "0123456789")
	<-entered
	conn := rawRequest(t, addr, "POST /in HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n", "0123456789")
	resp, _ := readAnswer(t, conn, true)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

// A stranger holding connections open takes at most server.max_connections of them: the
// next connection is not served (not even read) until one of those closes.
func TestConnectionsAreCapped(t *testing.T) {
	_, addr := startServer(t, Config{MaxConnections: 2}, func(e *echo.Echo) {
		e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	})
	held := make([]net.Conn, 2)
	for i := range held {
		held[i] = rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "")
		resp, _ := readAnswer(t, held[i], false) // served, and kept alive
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	waiting := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "")
	// Proving a negative needs some wait; this one only bounds how long we look.
	require.NoError(t, waiting.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err := bufio.NewReader(waiting).ReadByte()
	var netErr net.Error
	require.ErrorAs(t, err, &netErr, "a third connection must wait")
	require.True(t, netErr.Timeout())

	require.NoError(t, held[0].Close())
	require.NoError(t, waiting.SetReadDeadline(time.Now().Add(failsafe)))
	resp, _ := readAnswer(t, waiting, false)
	require.Equal(t, http.StatusOK, resp.StatusCode, "served once a held connection closed")
}

// Headers beyond server.max_header_bytes are refused with 431 before any handler runs.
func TestHeaderSizeBounded(t *testing.T) {
	_, addr := startServer(t, Config{MaxHeaderBytes: 4 << 10}, func(e *echo.Echo) {
		e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	})
	conn := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("a", 64<<10)+"\r\n", "")
	resp, _ := readAnswer(t, conn, false)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)

	conn = rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("a", 1<<10)+"\r\n", "")
	resp, _ = readAnswer(t, conn, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
