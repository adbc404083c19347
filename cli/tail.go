package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

const tailUsage = `Usage: gateway tail [flags]

Follows an agent thread's stream in the terminal: every signal (as the XML the model
sees) and every run opening or closing, one line each. It reconnects where it left off
when the stream drops. The token is the agent's (agents[].token).

Example:
  export SIGNALGATE_AGENT_TOKEN=dev-only-coder-token
  gateway tail --agent coder --resource acme/api --thread 'acme/api#7' --after 0

Flags:
`

// tailFrame is the data of one SSE frame, signal or run.
type tailFrame struct {
	Seq       int64     `json:"seq"`
	RunID     *string   `json:"runId"`
	Action    string    `json:"action"`
	TagName   string    `json:"tagName"`
	XML       string    `json:"xml"`
	Status    string    `json:"status"`
	Origin    string    `json:"origin"`
	CreatedAt time.Time `json:"createdAt"`
}

func tailCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("tail", tailUsage, stderr)
	c := clientFlags(fs, lookup, envAgentToken)
	agentID := fs.String("agent", "", "agent id")
	resource := fs.String("resource", "", "resource id of the thread")
	thread := fs.String("thread", "", "thread id")
	after := fs.String("after", "latest", "start after this sequence number (0: the whole log; latest: only new frames)")
	count := fs.Int("count", 0, "exit after this many frames (0: follow until interrupted)")
	raw := fs.Bool("json", false, "print each frame's JSON data instead of a line of text")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	err := required([2]string{"agent", *agentID}, [2]string{"resource", *resource}, [2]string{"thread", *thread})
	if err == nil {
		err = c.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway tail: %v\n", err)
		return exitConfig
	}
	path := threadPath(*agentID, *resource, *thread) + "/stream?after=" + url.QueryEscape(*after)
	name := *agentID + "/" + *resource + "/" + *thread
	t := &tail{c: c, path: path, stdout: stdout, stderr: stderr, raw: *raw, count: *count, backoff: time.Second}
	if err := t.run(ctx, name); err != nil {
		fmt.Fprintf(stderr, "gateway tail: %v\n", err)
		return exitFail
	}
	return exitOK
}

type tail struct {
	c      *client
	path   string
	stdout io.Writer
	stderr io.Writer
	raw    bool
	count  int
	seen   int
	lastID string // resume point: the last frame's SSE id
	// backoff is the first wait before reconnecting; it doubles up to 30s.
	backoff time.Duration
}

// errDone ends the loop once --count frames were printed.
var errDone = errors.New("done")

// finalError ends the loop with an error retrying cannot fix.
type finalError struct{ error }

// run follows the stream until ctx ends or --count frames were printed. The first
// connection must succeed; later drops reconnect with Last-Event-ID.
func (t *tail) run(ctx context.Context, name string) error {
	backoff := t.backoff
	for first := true; ; first = false {
		err := t.follow(ctx, name, first)
		var final finalError
		switch {
		case errors.Is(err, errDone) || ctx.Err() != nil:
			return nil
		case errors.As(err, &final):
			return final.error
		case first && err != nil:
			return err
		case err != nil:
			fmt.Fprintf(t.stderr, "stream lost (%v); reconnecting in %s\n", err, backoff)
		default:
			fmt.Fprintf(t.stderr, "stream ended; reconnecting in %s\n", backoff)
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// follow reads one connection to its end. A 4xx answer is final: the token, thread or
// cursor will not get better by retrying.
func (t *tail) follow(ctx context.Context, name string, first bool) error {
	req, err := t.c.request(ctx, http.MethodGet, t.path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if t.lastID != "" {
		req.Header.Set("Last-Event-ID", t.lastID)
	}
	resp, err := t.c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		err := readAPIError(resp.StatusCode, body)
		if resp.StatusCode < 500 {
			return finalError{err}
		}
		return err
	}
	if first {
		fmt.Fprintf(t.stderr, "following %s (Ctrl-C to stop)\n", name)
	}
	for ev, err := range sse.Read(resp.Body, nil) {
		if err != nil {
			return err
		}
		if ev.LastEventID != "" {
			t.lastID = ev.LastEventID
		}
		if ev.Data == "" {
			continue // ?after=latest's position: nothing to print, only where to resume
		}
		t.print(ev)
		t.seen++
		if t.count > 0 && t.seen >= t.count {
			return errDone
		}
	}
	return nil
}

func (t *tail) print(ev sse.Event) {
	if t.raw {
		fmt.Fprintln(t.stdout, ev.Data)
		return
	}
	fmt.Fprintln(t.stdout, frameLine(ev.Type, ev.Data))
}

// frameLine renders one frame for a terminal.
func frameLine(event, data string) string {
	var f tailFrame
	if err := json.Unmarshal([]byte(data), &f); err != nil {
		return fmt.Sprintf("%s %s", event, data)
	}
	at := f.CreatedAt.UTC().Format(time.TimeOnly)
	if event == "run" {
		run := ""
		if f.RunID != nil {
			run = *f.RunID
		}
		return fmt.Sprintf("#%d %s run %s (run %s, origin %s)", f.Seq, at, f.Status, run, f.Origin)
	}
	into := "no run"
	if f.RunID != nil {
		into = "run " + *f.RunID
	}
	return fmt.Sprintf("#%d %s %s %s (%s): %s", f.Seq, at, event, f.Action, into, f.XML)
}
