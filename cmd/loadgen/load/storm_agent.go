package load

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// stormAgent is one thread's agent: it follows the thread's stream, finishes a run the
// gateway's wake opened once it has handled it, and works on its own part of the time.
type stormAgent struct {
	cfg          *StormConfig
	k            inbox.ThreadKey
	client       *http.Client
	streams      *http.Client
	m            *stormMeter
	urgentLabels []string

	mu          sync.Mutex
	activeSince time.Time // zero while idle
	busy        time.Duration
	handlers    sync.WaitGroup
}

// follow reads the thread's stream until ctx ends, resuming after a drop. ready gets one
// value once the stream is placed (frames after it are counted).
func (a *stormAgent) follow(ctx context.Context, ready chan<- struct{}) {
	defer a.handlers.Wait()
	var last int64 = -1
	signalled := false
	for ctx.Err() == nil {
		err := a.read(ctx, &last, func() {
			if !signalled {
				signalled = true
				ready <- struct{}{}
			}
		})
		if ctx.Err() != nil {
			return
		}
		_ = err // a dropped stream resumes from the last id
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

func (a *stormAgent) read(ctx context.Context, last *int64, placed func()) error {
	body, err := openStream(ctx, a.streams, a.cfg.URL, a.cfg.Scenario.AgentToken, a.k, *last, *last >= 0)
	if err != nil {
		return err
	}
	defer body.Close()
	return readEvents(body, func(id, event, data string) {
		if seq, err := strconv.ParseInt(id, 10, 64); err == nil {
			*last = seq
			placed()
		}
		if data != "" {
			a.frame(ctx, event, data)
		}
	})
}

func (a *stormAgent) frame(ctx context.Context, event, data string) {
	var f struct {
		ID       string          `json:"id"`
		Action   string          `json:"action"`
		Contents string          `json:"contents"`
		RunID    string          `json:"runId"`
		Status   string          `json:"status"`
		Origin   string          `json:"origin"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal([]byte(data), &f) != nil {
		return
	}
	now := time.Now()
	switch event {
	case "signal":
		a.m.signal(f.Action, f.Contents, a.urgentLabels, now)
		if a.cfg.Replies && f.Action == "wake" {
			a.handlers.Add(1)
			go func() { defer a.handlers.Done(); a.reply(ctx, f.ID, f.Metadata) }()
		}
	case "run":
		a.mu.Lock()
		if f.Status == "open" && a.activeSince.IsZero() {
			a.activeSince = now
		} else if f.Status != "open" && !a.activeSince.IsZero() {
			a.busy += now.Sub(a.activeSince)
			a.activeSince = time.Time{}
		}
		a.mu.Unlock()
		if f.Status == "open" && f.Origin == "wake" {
			a.m.mu.Lock()
			a.m.wakes++
			a.m.mu.Unlock()
			a.handlers.Add(1)
			go func() {
				defer a.handlers.Done()
				if service.Sleep(ctx, a.cfg.Handle) {
					a.post(ctx, "/runs/"+url.PathEscape(f.RunID)+"/finish")
				}
			}()
		}
	}
}

// work keeps the agent busy on its own Busy of every BusyPeriod, starting after phase.
func (a *stormAgent) work(ctx context.Context, phase time.Duration) {
	if !service.Sleep(ctx, phase) {
		return
	}
	on := time.Duration(a.cfg.Busy * float64(a.cfg.BusyPeriod))
	for ctx.Err() == nil {
		var run struct {
			RunID string `json:"runId"`
		}
		a.postJSON(ctx, "/runs", &run)
		if !service.Sleep(ctx, on) {
			return
		}
		if run.RunID != "" {
			a.post(ctx, "/runs/"+url.PathEscape(run.RunID)+"/finish")
		}
		if !service.Sleep(ctx, a.cfg.BusyPeriod-on) {
			return
		}
	}
}

// busyTotal is the time the thread had an open run, up to now.
func (a *stormAgent) busyTotal(now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.busy
	if !a.activeSince.IsZero() {
		b += now.Sub(a.activeSince)
	}
	return b
}

func (a *stormAgent) post(ctx context.Context, suffix string) { a.postJSON(ctx, suffix, nil) }

func (a *stormAgent) postJSON(ctx context.Context, suffix string, out any) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ThreadURL(a.cfg.URL, a.k, suffix), strings.NewReader("{}"))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.Scenario.AgentToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
}

// reply answers a wake: a reply to the place its notification came from (its
// metadata.replyTo), or to the thread's most recent origin for a signal that names none
// (a summary).
func (a *stormAgent) reply(ctx context.Context, signalID string, metadata json.RawMessage) {
	var md struct {
		ReplyTo json.RawMessage `json:"replyTo"`
	}
	_ = json.Unmarshal(metadata, &md)
	id := "storm-" + signalID
	a.m.replies.threads.Store(id, a.k)
	req := map[string]any{"id": id, "text": "On it: looking at this now."}
	if len(md.ReplyTo) > 0 && string(md.ReplyTo) != "null" {
		req["replyTo"] = md.ReplyTo
	}
	body, err := json.Marshal(req)
	if err != nil {
		return
	}
	status, code := 0, ""
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, ThreadURL(a.cfg.URL, a.k, "/replies"), bytes.NewReader(body))
	if err == nil {
		hr.Header.Set("Authorization", "Bearer "+a.cfg.Scenario.AgentToken)
		hr.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = a.client.Do(hr); err == nil {
			status = resp.StatusCode
			var out struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
				Code string `json:"code"`
			}
			_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out)
			code = cmp.Or(out.Error.Code, out.Code)
			resp.Body.Close()
		}
	}
	r := a.m.replies
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	r.Asked++
	switch {
	case err != nil:
		r.Failed++
	case status == http.StatusAccepted || status == http.StatusOK:
		r.Queued++
	default:
		if r.Refused == nil {
			r.Refused = map[string]int{}
		}
		r.Refused[strings.TrimSpace(strconv.Itoa(status)+" "+code)]++
	}
}
