package server

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/server/servertest"
)

const testBodyLimit = 1 << 10

// bodyRoutes mounts a route that reads its body, one that answers without reading it,
// and one that reads it and then refuses it; GET /in is a method not allowed and any
// other path is unknown.
func bodyRoutes(e *echo.Echo) {
	e.POST("/in", readAll)
	e.POST("/ignore", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.POST("/refuse", func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return err
		}
		return BadRequest("refused")
	})
}

// A body over server.body_limit is answered 413 as soon as that is known, on every
// route, and its connection is closed without waiting for the rest. The body timeout is
// far beyond the test, so neither the answer nor the close can come from it.
func TestOverLimitAnsweredAtOnce(t *testing.T) {
	_, addr := startServer(t, Config{BodyLimit: testBodyLimit, BodyTimeout: time.Hour}, bodyRoutes)
	over := fmt.Sprintf("Content-Length: %d\r\n", 2*testBodyLimit)
	for name, a := range map[string]struct {
		head string
		body []string
	}{
		"length over the limit":               {"POST /in HTTP/1.1\r\nHost: x\r\n" + over, servertest.Bytes(1000)},
		"length over, expecting 100-continue": {"POST /in HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" + over, servertest.Bytes(1000)},
		"length over, handler never reads":    {"POST /ignore HTTP/1.1\r\nHost: x\r\n" + over, servertest.Bytes(1000)},
		"length over, unknown path":           {"POST /nope HTTP/1.1\r\nHost: x\r\n" + over, servertest.Bytes(1000)},
		"length over, method not allowed":     {"GET /in HTTP/1.1\r\nHost: x\r\n" + over, servertest.Bytes(1000)},
		"chunked past the limit": {"POST /in HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n",
			append([]string{servertest.Chunk(testBodyLimit + 1)}, servertest.Chunks(1000)...)},
	} {
		t.Run(name, func(t *testing.T) {
			ans := servertest.Trickle(t, addr, a.head, a.body)
			require.Equal(t, http.StatusRequestEntityTooLarge, ans.Status)
			require.Positive(t, ans.Unsent, "answered only once the whole body was sent")
		})
	}

	// A refusal of a body that was read in full keeps the connection for the next request.
	conn := rawRequest(t, addr, "POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n", "{}")
	resp, _ := readAnswer(t, conn, false)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	_, err := io.WriteString(conn, "POST /in HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	require.NoError(t, err)
	resp, body := readAnswer(t, conn, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "2", string(body))
}

// Whatever the route and the headers, a sender trickling its body a byte at a time holds
// its connection for server.body_timeout at most: the answer and the close come while it
// still has most of its body unsent.
func TestTrickledBodyHeldAtMostBodyTimeout(t *testing.T) {
	_, addr := startServer(t, Config{BodyLimit: testBodyLimit, BodyTimeout: 200 * time.Millisecond}, bodyRoutes)
	for _, line := range []string{"POST /in", "POST /ignore", "POST /refuse", "POST /nope", "GET /in"} {
		for name, a := range servertest.Attacks(testBodyLimit) {
			t.Run(line+", "+name, func(t *testing.T) {
				ans := servertest.Trickle(t, addr, line+" HTTP/1.1\r\nHost: x\r\n"+a.Head, a.Body)
				require.Positive(t, ans.Unsent, "held until the whole body was sent")
				if a.Over {
					require.Equal(t, http.StatusRequestEntityTooLarge, ans.Status)
				}
			})
		}
	}
}
