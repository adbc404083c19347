package agentapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// DefaultKeepAlive is the interval of `: keep-alive` comments on an idle stream.
const DefaultKeepAlive = 25 * time.Second

// streamPage bounds one read of the log while catching up.
const streamPage = 256

// serveStream is GET …/stream: it replays the log after the cursor, then waits for the
// broker's wake-ups and reads the log again, until the client leaves or the server stops.
//
// The cursor is the Last-Event-ID header (the seq of the last frame the client has), or
// the `after` query parameter: a seq, or `latest` for only new frames. Without either the
// whole log replays, so a runtime connecting for the first time still sees the wake that
// happened before it connected. `latest` first writes an `id:` line with no data: the
// position it resolved to, which an EventSource keeps as its last event id, so a client
// cut off before its first frame resumes there instead of skipping to a later "latest".
func (a *API) serveStream(c echo.Context, k inbox.ThreadKey) error {
	return a.serveStreamCapped(c, k, a.streams)
}

func (a *API) serveStreamCapped(c echo.Context, k inbox.ThreadKey, caps *streamCaps) error {
	after, latest, err := a.streamCursor(c, k)
	if err != nil {
		return err
	}
	cfg, _ := a.svc.Agent(k.Agent)
	release, err := caps.open(cfg, k)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Subscribe before the first read: a frame committed in between still wakes us.
	wake, committed, unsubscribe := a.subscribe(k)
	defer unsubscribe()
	var live <-chan agent.Frame // nil (never ready) when the broker has no live frames
	if ls, ok := a.broker.(agent.LiveSubscriber); ok {
		var unsubscribeLive func()
		live, unsubscribeLive = ls.SubscribeLive(k)
		defer unsubscribeLive()
	}
	a.subscribers(1)
	defer a.subscribers(-1)
	defer release() // before the gauge says closed: the place is free by then

	w := c.Response()
	rc := http.NewResponseController(w)
	// The server's WriteTimeout would cut the stream; a recorder in tests cannot do this.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("clear write deadline: %w", err)
	}
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set(echo.HeaderConnection, "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// No buffer of our own: the response writer already buffers for the life of the
	// connection (2 KB per subscriber saved), and each flush sends what a read wrote.
	flush := rc.Flush
	if latest {
		// An event with an id and no data sets the client's last event id and dispatches
		// nothing (the SSE processing model).
		if _, err := fmt.Fprintf(w, "id: %d\n\n", after); err != nil {
			return nil
		}
	}
	if err := flush(); err != nil {
		return nil
	}
	keepAlive := time.NewTicker(a.keepAlive)
	defer keepAlive.Stop()
	// The log is read to catch up: at the start, on a wake-up token (a frame this
	// replica could not hand over, another replica's, a run), on a gap in the frames
	// handed over, and every keep-alive.
	catchUp := true
	for {
		if catchUp {
			var ok bool
			if after, ok = a.catchUp(ctx, w, k, after); !ok {
				return nil
			}
			catchUp = false
		}
		if err := flush(); err != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.done:
			return nil
		case _, ok := <-wake:
			if !ok {
				return nil // broker stopped
			}
			catchUp = true
		case f := <-committed:
			// In seq order: written if next, skipped if written already, and a gap (a
			// repeat's unused seq, frames dropped for want of room) is read from the log.
			var ok bool
			if after, catchUp, ok = writeCommitted(w, f, committed, after); !ok {
				return nil
			}
		case f, ok := <-live:
			if !ok {
				return nil // broker stopped
			}
			// No id line: a live-only frame has no place in the log to resume from.
			if err := writeLiveFrame(w, f); err != nil {
				return nil
			}
		case <-keepAlive.C:
			// The loop then reads the log again: one indexed query per subscriber every
			// keep-alive, and a safety net should a wake-up ever be lost.
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			if err := flush(); err != nil {
				return nil
			}
			catchUp = true
		}
	}
}

// subscribe takes k's committed frames in memory when the broker hands them over.
func (a *API) subscribe(k inbox.ThreadKey) (<-chan struct{}, <-chan *agent.Frame, func()) {
	if fs, ok := a.broker.(agent.FrameSubscriber); ok {
		return fs.SubscribeFrames(k)
	}
	wake, unsubscribe := a.broker.Subscribe(k)
	return wake, nil, unsubscribe // a nil channel is never ready
}

// catchUp writes k's logged frames after the cursor and returns the new cursor; ok is
// false when the stream should end.
func (a *API) catchUp(ctx context.Context, w io.Writer, k inbox.ThreadKey, after int64) (int64, bool) {
	for {
		frames, err := a.frames.FramesAfter(ctx, k, after, streamPage)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("read thread log", "thread", k.String(), "error", err.Error())
			}
			return after, false // the client reconnects with Last-Event-ID
		}
		for _, f := range frames {
			if err := writeFrame(w, f); err != nil {
				return after, false
			}
			after = f.Seq
		}
		if len(frames) < streamPage {
			return after, true
		}
	}
}

// writeCommitted writes f and whatever else is waiting on more, in order, and returns the
// cursor and whether the log must be read for a gap; ok is false when the stream should end.
func writeCommitted(w io.Writer, f *agent.Frame, more <-chan *agent.Frame, after int64) (cursor int64, gap, ok bool) {
	for {
		switch {
		case f.Seq <= after: // written already, from the log
		case f.Seq == after+1:
			if err := writeFrame(w, *f); err != nil {
				return after, false, false
			}
			after = f.Seq
		default:
			return after, true, true
		}
		select {
		case f = <-more:
		default:
			return after, false, true
		}
	}
}

// streamCursor is the seq to resume after, and whether it was resolved from `latest`.
func (a *API) streamCursor(c echo.Context, k inbox.ThreadKey) (int64, bool, error) {
	raw, name := c.Request().Header.Get("Last-Event-ID"), "Last-Event-ID"
	if raw == "" {
		raw, name = c.QueryParam("after"), "after"
	}
	raw = strings.TrimSpace(raw)
	switch raw {
	case "":
		return 0, false, nil
	case "latest":
		if name == "after" {
			seq, err := a.frames.LastSeq(c.Request().Context(), k)
			if err != nil {
				return 0, false, fmt.Errorf("read stream position: %w", err)
			}
			return seq, true, nil
		}
	}
	seq, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || seq < 0 {
		return 0, false, server.BadRequest("%s: want the seq of the last frame received (a non-negative integer), got %q", name, raw)
	}
	return seq, false, nil
}

func writeFrame(w io.Writer, f agent.Frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode frame %s: %w", f.ID, err)
	}
	// json.Marshal never emits a raw newline, so the data fits one `data:` line.
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", f.Seq, f.Event, data)
	return err
}

func writeLiveFrame(w io.Writer, f agent.Frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode frame %s: %w", f.ID, err)
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.Event, data)
	return err
}

// ServeStream serves k's stream to a caller the agent API did not authenticate (the
// console, under its operator session): the same log and cursor as GET …/stream, under
// the same per-agent and per-thread caps counted apart, and in the gateway's one stream
// limit within the viewers' share of it, so viewers crowd out neither the agents' own
// streams nor the connections ingest needs. An unconfigured agent is 404.
func (a *API) ServeStream(c echo.Context, k inbox.ThreadKey) error {
	if _, ok := a.svc.Agent(k.Agent); !ok {
		return server.NotFound("unknown agent %q", k.Agent)
	}
	for _, part := range [][2]string{{"resource", k.Resource}, {"thread", k.Thread}} {
		if err := inbox.CheckID(part[1]); err != nil {
			return server.BadRequest("%s: %v", part[0], err)
		}
	}
	return a.serveStreamCapped(c, k, a.viewerStreams)
}
