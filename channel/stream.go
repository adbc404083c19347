package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

// maxBackoff bounds the wait between reconnects.
const maxBackoff = 30 * time.Second

// follower reads the thread's stream, reconnecting where it left off.
type follower struct {
	s *Server
	// lastID is the resume point: the SSE id of the last frame handled.
	lastID string
	// lastSeq skips a frame at or before one already handled (a server that resent one).
	lastSeq int64
	// held are signals written without waking, sent before the next one that wakes or
	// joins a run (a channel notification always starts a turn).
	held []frame
	// connected says the last connection was accepted.
	connected bool
}

// errFinal is a refusal reconnecting cannot fix (a 4xx: the token, thread or cursor).
type errFinal struct{ error }

// run follows until ctx ends or the gateway refuses the stream for good.
func (f *follower) run(ctx context.Context) error {
	backoff := f.s.backoff
	for {
		err := f.follow(ctx)
		var final errFinal
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &final):
			return final.error
		}
		if f.connected {
			backoff = f.s.backoff // the last connection got through: start over
		}
		if err != nil {
			f.s.log.Warn("thread stream lost; reconnecting", "error", err.Error(), "wait", backoff.String())
		} else {
			f.s.log.Info("thread stream ended; reconnecting", "wait", backoff.String())
		}
		if f.s.testReconnect != nil {
			f.s.testReconnect()
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// follow reads one connection to its end.
func (f *follower) follow(ctx context.Context) error {
	f.connected = false
	path := f.s.threadPath + "/stream"
	if f.lastID == "" {
		path += "?after=" + url.QueryEscape(f.s.after)
	}
	req, err := f.s.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if f.lastID != "" {
		req.Header.Set("Last-Event-ID", f.lastID)
	}
	resp, err := f.s.http.Do(req)
	if err != nil {
		return fmt.Errorf("open the thread stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		err := fmt.Errorf("open the thread stream: %s", apiError(resp.StatusCode, body))
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return errFinal{err}
		}
		return err
	}
	f.connected = true
	f.s.log.Info("following the thread stream", "thread", f.s.threadName, "after", f.lastID)
	f.s.syncTools(ctx)
	for ev, err := range sse.Read(resp.Body, nil) {
		if err != nil {
			return err
		}
		if err := f.handle(ctx, ev); err != nil {
			return errFinal{err}
		}
		if ev.LastEventID != "" {
			f.lastID = ev.LastEventID
		}
	}
	return nil
}

// handle forwards one frame; an error means the client is gone.
func (f *follower) handle(ctx context.Context, ev sse.Event) error {
	if ev.Type != "signal" || ev.Data == "" {
		return nil // run frames, and ?after=latest's bare position
	}
	var fr frame
	if err := json.Unmarshal([]byte(ev.Data), &fr); err != nil {
		f.s.log.Warn("skipped an unreadable signal frame", "error", err.Error())
		return nil
	}
	if ev.LastEventID != "" {
		seq, err := strconv.ParseInt(ev.LastEventID, 10, 64)
		if err == nil && seq <= f.lastSeq {
			return nil
		}
		f.lastSeq = seq
	}
	if v, ok := verdictOf(fr); ok {
		if v.Behavior == "" {
			return nil
		}
		f.s.log.Info("permission decided in Slack", "request_id", v.RequestID, "behavior", v.Behavior)
		return f.s.tap.notify(ctx, MethodPermission, v)
	}
	if fr.Action == actionPersist {
		f.held = append(f.held, fr)
		if len(f.held) > maxHeld {
			f.held = f.held[1:]
		}
		return nil
	}
	for _, h := range append(f.held, fr) {
		if err := f.s.tap.notify(ctx, MethodChannel, notification(h)); err != nil {
			return err
		}
		f.s.log.Debug("signal sent to the session", "signal_id", h.ID, "seq", h.Seq)
	}
	f.held = nil
	if f.s.testSent != nil {
		f.s.testSent()
	}
	return nil
}

// maxHeld bounds the signals held back without waking: the oldest go first.
const maxHeld = 100

// apiError is a gateway refusal as one line: its status and error message.
func apiError(status int, body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return fmt.Sprintf("HTTP %d %s: %s", status, e.Error.Code, e.Error.Message)
	}
	return fmt.Sprintf("HTTP %d", status)
}
