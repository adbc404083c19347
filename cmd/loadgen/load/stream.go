package load

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// ThreadURL is the agent API path of k under base.
func ThreadURL(base string, k inbox.ThreadKey, suffix string) string {
	return strings.TrimRight(base, "/") + "/v1/agents/" + url.PathEscape(k.Agent) + "/threads/" +
		url.PathEscape(k.Resource) + "/" + url.PathEscape(k.Thread) + suffix
}

// subscriber follows one thread's stream, resuming with Last-Event-ID after any
// disconnect (a gateway restart, a replica dying), on the next URL each time. Its first
// position is the `id:` cursor that ?after=latest sends before any frame: once it has
// one it never asks for "latest" again, so frames committed while it was cut off before
// its first frame are not skipped.
type subscriber struct {
	ti      int
	key     inbox.ThreadKey
	urls    []string
	token   string
	client  *http.Client
	tr      *tracker
	seen    map[string]bool
	last    int64
	placed  bool // last is a position the stream gave (the cursor or a frame)
	reconns atomic.Int64
}

// run connects and reads until ctx ends; ready is closed after the first connect.
func (s *subscriber) run(ctx context.Context, ready chan<- struct{}) {
	first := true
	backoff := 50 * time.Millisecond
	for attempt := 0; ctx.Err() == nil; attempt++ {
		base := s.urls[(s.ti+attempt)%len(s.urls)]
		err := s.read(ctx, base, func() {
			if first {
				first = false
				close(ready)
			}
			backoff = 50 * time.Millisecond
		})
		if ctx.Err() != nil {
			break
		}
		_ = err // a dropped stream is expected while a gateway restarts
		s.reconns.Add(1)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		backoff = min(backoff*2, time.Second)
	}
	if first {
		close(ready)
	}
}

func (s *subscriber) read(ctx context.Context, base string, connected func()) error {
	// The thread may hold frames of an earlier run; only this run's matter.
	body, err := openStream(ctx, s.client, base, s.token, s.key, s.last, s.placed)
	if err != nil {
		return err
	}
	defer body.Close()
	if s.placed {
		connected()
	}
	return readEvents(body, func(id, event, data string) {
		if event == "signal" && data != "" {
			s.signal(id, data)
		}
		if seq, err := strconv.ParseInt(id, 10, 64); err == nil && (seq > s.last || !s.placed) {
			s.last = seq
			if !s.placed {
				// Ready only once placed: load sent before this could be skipped.
				s.placed = true
				connected()
			}
		}
	})
}

func (s *subscriber) signal(seq, data string) {
	var f struct {
		ID       string `json:"id"`
		Contents string `json:"contents"`
	}
	if err := json.Unmarshal([]byte(data), &f); err != nil || f.ID == "" {
		return
	}
	s.tr.frame(s.ti, f.ID, f.Contents, time.Now(), s.seen)
}

// busyAgent opens and finishes runs on a thread until ctx ends, so deliveries meet
// active threads too.
func busyAgent(ctx context.Context, client *http.Client, base, token string, k inbox.ThreadKey, hold time.Duration) {
	post := func(suffix string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ThreadURL(base, k, suffix), strings.NewReader("{}"))
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var out struct {
			RunID string `json:"runId"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out.RunID, nil
	}
	for ctx.Err() == nil {
		id, err := post("/runs")
		if err == nil && id != "" {
			if !service.Sleep(ctx, hold) {
				return
			}
			_, _ = post("/runs/" + url.PathEscape(id) + "/finish")
		}
		if !service.Sleep(ctx, hold) {
			return
		}
	}
}
