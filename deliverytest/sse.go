package deliverytest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// Event is one SSE event as a subscriber sees it.
type Event struct {
	ID      string
	Event   string
	Data    map[string]any
	Raw     string
	Comment string // set for comment lines (": keep-alive")
}

// Seq is the event's id as a number.
func (ev Event) Seq() int64 {
	n, _ := strconv.ParseInt(ev.ID, 10, 64)
	return n
}

// Str reads a string field of the data.
func (ev Event) Str(key string) string {
	s, _ := ev.Data[key].(string)
	return s
}

// Stream is an open SSE subscription.
type Stream struct {
	t      testing.TB
	Resp   *http.Response
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}
}

// Subscribe opens GET …/stream; lastEventID and query may be empty.
func (e *Env) Subscribe(k inbox.ThreadKey, lastEventID, query string) *Stream {
	e.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := e.ThreadURL(k, "/stream")
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(e.T, err)
	req.Header.Set("Authorization", "Bearer "+e.token(k))
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.T, err)
	require.Equal(e.T, http.StatusOK, resp.StatusCode)
	require.Equal(e.T, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &Stream{t: e.T, Resp: resp, events: make(chan Event, 1024), cancel: cancel, done: make(chan struct{})}
	go s.read()
	e.T.Cleanup(s.Close)
	return s
}

func (s *Stream) read() {
	defer close(s.done)
	defer close(s.events)
	sc := bufio.NewScanner(s.Resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var ev Event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || ev.Raw != "" {
				if ev.Raw != "" {
					_ = json.Unmarshal([]byte(ev.Raw), &ev.Data)
				}
				s.events <- ev
			}
			ev = Event{}
		case strings.HasPrefix(line, ":"):
			s.events <- Event{Comment: strings.TrimSpace(strings.TrimPrefix(line, ":"))}
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Raw += strings.TrimPrefix(line, "data: ")
		}
	}
}

// Next returns the next event (skipping comments), failing after timeout.
func (s *Stream) Next(timeout time.Duration) Event {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatal("stream ended")
			}
			if ev.Comment != "" {
				continue
			}
			return ev
		case <-deadline:
			s.t.Fatal("no event within timeout")
		}
	}
}

// NextAny returns the next event or comment.
func (s *Stream) NextAny(timeout time.Duration) (Event, bool) {
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(timeout):
		return Event{}, false
	}
}

// Take returns the next n events.
func (s *Stream) Take(n int) []Event {
	s.t.Helper()
	out := make([]Event, 0, n)
	for range n {
		out = append(out, s.Next(10*time.Second))
	}
	return out
}

// Quiet asserts that no event arrives within d (after the caller made every frame it
// expects durable, so a short wait only guards against extra frames).
func (s *Stream) Quiet(d time.Duration) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok && ev.Comment == "" {
			s.t.Fatalf("unexpected event %s %s %s", ev.ID, ev.Event, ev.Raw)
		}
	case <-time.After(d):
	}
}

// Ended reports whether the server closed the stream within timeout.
func (s *Stream) Ended(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// Close disconnects.
func (s *Stream) Close() {
	s.cancel()
	_ = s.Resp.Body.Close()
	<-s.done
}
