// Package sessiontest is a recording fake of a hosted session API, and the comparison of
// the gateway's requests with those the vendor's library sent for the same input
// (recorded fixtures).
package sessiontest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Request is one recorded request.
type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// Case is one fixture case: what the library sent.
type Case struct {
	Name     string          `json:"name"`
	Result   json.RawMessage `json:"result"`
	Requests []Request       `json:"requests"`
}

// Fixtures reads a recorded fixture file ({sdk, version, cases}).
func Fixtures(t *testing.T, path string) map[string]Case {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var f struct {
		Cases []Case `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	out := map[string]Case{}
	for _, c := range f.Cases {
		out[c.Name] = c
	}
	return out
}

// Server records every request and answers each with respond (nil: 200 {}).
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	respond  func(r Request) (int, string)
}

// New starts a recording server; it closes with the test.
func New(t *testing.T, respond func(r Request) (int, string)) *Server {
	s := &Server{respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := Request{Method: r.Method, Path: r.URL.RequestURI(), Headers: map[string]string{}}
		for k := range r.Header {
			req.Headers[strings.ToLower(k)] = r.Header.Get(k)
		}
		if len(body) > 0 {
			req.Body = body
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		status, answer := http.StatusOK, "{}"
		if s.respond != nil {
			status, answer = s.respond(req)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests are the requests taken so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequireSame requires got to be want as far as the API reads it: method, path and
// query, the headers named (absent in both, or equal) and the JSON body, compared as
// JSON values.
func RequireSame(t *testing.T, want, got Request, headers ...string) {
	t.Helper()
	require.Equal(t, want.Method, got.Method)
	require.Equal(t, want.Path, got.Path)
	for _, h := range headers {
		w, wok := want.Headers[h]
		g, gok := got.Headers[h]
		require.Equal(t, wok, gok, "header %s present in the library's request: %v", h, wok)
		require.Equal(t, w, g, "header %s", h)
	}
	if len(want.Body) == 0 || string(want.Body) == "null" {
		require.Empty(t, got.Body)
		return
	}
	require.JSONEq(t, string(want.Body), string(got.Body))
}
