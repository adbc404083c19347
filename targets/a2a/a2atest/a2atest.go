// Package a2atest runs the A2A interop harness (interop/a2a: @a2a-js/sdk's server with
// agents that need no model) for tests, one process per test binary.
package a2atest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Harness is a running interop/a2a server. Its agents: echo (works a task, then
// completes echoing; "ask-user" in the text ends in input-required, "auth-user" in
// auth-required, "fail-task" in failed), ask (input-required first, completes on the
// follow-up) and hold (works until Release); under /v03/ the same agents with cards
// that declare only A2A v0.3.
type Harness struct {
	URL string
	cmd *exec.Cmd
	// skip is how many messages the server had received when this view of it was taken
	// (Shared.Get): Received answers only later ones.
	skip int
}

// Dir is the harness's folder: SIGNALGATE_A2A_INTEROP, else interop/a2a of this module.
func Dir() string {
	if d := os.Getenv("SIGNALGATE_A2A_INTEROP"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "interop", "a2a")
}

// ErrNotInstalled: the harness's node_modules are missing (.ci/a2a.sh installs them).
var ErrNotInstalled = errors.New("A2A interop harness not installed (run .ci/a2a.sh)")

// startWait only bounds a broken start: the server is ready in well under a second.
const startWait = 60 * time.Second

// Start starts the harness on a free loopback port; env adds to its environment.
func Start(env ...string) (*Harness, error) {
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk")); err != nil {
		return nil, ErrNotInstalled
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, ErrNotInstalled
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return nil, err
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PORT="+strconv.Itoa(port)), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready on") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(startWait):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, errors.New("the A2A harness did not start")
	}
	return &Harness{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}, nil
}

// Close stops the server.
func (h *Harness) Close() {
	if h == nil || h.cmd == nil {
		return
	}
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
}

// Shared is a test binary's one harness, started on first use: a test binary's
// TestMain closes it after the tests.
type Shared struct {
	once sync.Once
	h    *Harness
	err  error
}

// Get is the shared harness as t sees it: Received answers only what the agents were
// handed after Get, so a test run again (go test -count) finds its contexts fresh. t is
// skipped when the harness is not installed.
func (s *Shared) Get(t testing.TB) *Harness {
	t.Helper()
	s.once.Do(func() { s.h, s.err = Start() })
	if errors.Is(s.err, ErrNotInstalled) {
		t.Skip(s.err.Error())
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	var all []Received
	if err := s.h.get("/test/received", &all); err != nil {
		t.Fatal(err)
	}
	v := *s.h
	v.skip = len(all)
	return &v
}

// Close stops the harness if it was started.
func (s *Shared) Close() { s.h.Close() }

// Received is a message an agent's executor was handed.
type Received struct {
	At        int64            `json:"at"` // ms since the epoch
	Agent     string           `json:"agent"`
	TaskID    string           `json:"taskId"`
	ContextID string           `json:"contextId"`
	MessageID string           `json:"messageId"`
	TaskState any              `json:"taskState"`
	Parts     []map[string]any `json:"parts"`
	Metadata  map[string]any   `json:"metadata"`
}

// Text is the message's text parts.
func (r Received) Text() string {
	var out []string
	for _, p := range r.Parts {
		if s, ok := p["text"].(string); ok {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// Data is the message's first data part, nil when none.
func (r Received) Data() map[string]any {
	for _, p := range r.Parts {
		if d, ok := p["data"].(map[string]any); ok {
			return d
		}
	}
	return nil
}

// Received lists what the agents were handed in context contextID ("" for all).
func (h *Harness) Received(contextID string) ([]Received, error) {
	var all []Received
	if err := h.get("/test/received", &all); err != nil {
		return nil, err
	}
	var out []Received
	for _, r := range all[min(h.skip, len(all)):] {
		if contextID == "" || r.ContextID == contextID {
			out = append(out, r)
		}
	}
	return out, nil
}

// Requests are the JSON-RPC requests the server answered, by method.
type Requests struct {
	Total    int            `json:"total"`
	ByMethod map[string]int `json:"byMethod"`
}

// Requests reads the request counts.
func (h *Harness) Requests() (Requests, error) {
	var r Requests
	return r, h.get("/test/requests", &r)
}

// Release ends the hold agent's working tasks of contextID ("" for all).
func (h *Harness) Release(contextID string) error { return h.post("/test/release", contextID) }

// Forget makes the agents lose contextID's tasks, as a restarted agent does.
func (h *Harness) Forget(contextID string) error { return h.post("/test/forget", contextID) }

// Reset clears what was received and counted.
func (h *Harness) Reset() error { return h.post("/test/reset", "") }

func (h *Harness) get(path string, out any) error {
	resp, err := http.Get(h.URL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (h *Harness) post(path, contextID string) error {
	u := h.URL + path
	if contextID != "" {
		u += "?context=" + url.QueryEscape(contextID)
	}
	resp, err := http.Post(u, "application/json", bytes.NewReader(nil))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d", path, resp.StatusCode)
	}
	return nil
}
