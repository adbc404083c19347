// Package servertest plays the slow or oversized sender against a running server, over
// raw TCP, for the tests of the server's limits and of the gateway that mounts it.
package servertest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Failsafe only turns a hang into a failure; every bound under test is far shorter.
const Failsafe = 10 * time.Second

// Tick is the sender's pace: one piece of body per tick. A plan of a thousand pieces
// lasts seconds, far past the bounds under test, so an answer that comes with pieces
// still unsent came before the body did.
const Tick = 5 * time.Millisecond

// Bytes is a body of n one-byte pieces.
func Bytes(n int) []string { return pieces("x", n) }

// Chunks is a chunked body of n one-byte chunks (never the last chunk).
func Chunks(n int) []string { return pieces("1\r\nx\r\n", n) }

// Chunk is one chunk of n bytes.
func Chunk(n int) string {
	return strconv.FormatInt(int64(n), 16) + "\r\n" + strings.Repeat("x", n) + "\r\n"
}

func pieces(p string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// Attack is the body of a request, as its headers declare it and as its sender
// trickles it.
type Attack struct {
	// Head is the header lines about the body, each ending in CRLF.
	Head string
	Body []string
	// Over marks a declared length over the body limit: the answer must be 413.
	Over bool
}

// Attacks are the ways to send a body slowly to a server whose body limit is limit: a
// length over it, a chunked body with no length, a length under it that the body takes
// forever to fill, each with and without Expect: 100-continue where it has a length.
func Attacks(limit int) map[string]Attack {
	over := "Content-Length: " + strconv.Itoa(limit+1) + "\r\n"
	return map[string]Attack{
		"length over the limit":                {Head: over, Body: Bytes(1000), Over: true},
		"length over, expecting 100-continue":  {Head: "Expect: 100-continue\r\n" + over, Body: Bytes(1000), Over: true},
		"chunked":                              {Head: "Transfer-Encoding: chunked\r\n", Body: Chunks(1000)},
		"length under the limit":               {Head: "Content-Length: 1000\r\n", Body: Bytes(1000)},
		"length under, expecting 100-continue": {Head: "Expect: 100-continue\r\nContent-Length: 1000\r\n", Body: Bytes(1000)},
	}
}

// Answer is what the sender saw.
type Answer struct {
	Status int
	// Unsent is how many pieces of the body were still unsent when the answer's
	// status line arrived.
	Unsent int
}

// Trickle opens a connection to addr, sends head (request line and headers, each ending
// in CRLF, without the blank line) and then body, one piece per Tick, until the server
// answers (an interim 100 Continue is not an answer). It then stops sending and requires
// the server to close the connection: a read ends in EOF, or in a reset when bytes sent
// just before the close were never read.
func Trickle(t testing.TB, addr, head string, body []string) Answer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(Failsafe)))
	_, err = io.WriteString(conn, head+"\r\n")
	require.NoError(t, err)

	status, closed := make(chan int, 1), make(chan error, 1)
	go func() {
		br := bufio.NewReader(conn)
		for {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				status <- 0
				closed <- err
				return
			}
			if resp.StatusCode < http.StatusOK {
				continue
			}
			status <- resp.StatusCode
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				closed <- err
				return
			}
			_, err = br.ReadByte()
			closed <- err
			return
		}
	}()

	tick := time.NewTicker(Tick)
	defer tick.Stop()
	unsent, refused := body, false
	for {
		select {
		case code := <-status:
			err := <-closed
			require.NotZero(t, code, "the server must answer (%d of %d pieces unsent); read: %v", len(unsent), len(body), err)
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				require.Fail(t, "the server must close the connection after its answer", "read: %v", err)
			}
			return Answer{Status: code, Unsent: len(unsent)}
		case <-tick.C:
			if len(unsent) == 0 || refused {
				continue
			}
			if _, err := io.WriteString(conn, unsent[0]); err != nil {
				refused = true // the server has closed; its answer, if any, is on its way
				continue
			}
			unsent = unsent[1:]
		}
	}
}
