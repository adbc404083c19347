package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

const token = "fake-agent-token-0123"

// fakeInbox authenticates one agent and answers from canned values; fail makes every
// operation fail as a database would.
type fakeInbox struct {
	fail  error
	calls atomic.Int64 // the SDK runs a batch's calls concurrently
}

func (f *fakeInbox) Caller(header string) (string, error) {
	if header != "Bearer "+token {
		return "", server.Unauthorized()
	}
	return "coder", nil
}

func (f *fakeInbox) Thread(caller, agentID, resource, thread string) (inbox.ThreadKey, error) {
	if agentID != caller {
		return inbox.ThreadKey{}, server.Forbidden("not yours")
	}
	return inbox.ThreadKey{Agent: agentID, Resource: resource, Thread: thread}, nil
}

func (f *fakeInbox) ListInbox(context.Context, inbox.ThreadKey, agent.ListParams) (agent.InboxPage, error) {
	f.calls.Add(1)
	return agent.InboxPage{}, f.fail
}

func (f *fakeInbox) ReadInbox(context.Context, inbox.ThreadKey, []string) ([]agent.ReadNotification, error) {
	f.calls.Add(1)
	return nil, f.fail
}

func (f *fakeInbox) ActOn(context.Context, inbox.ThreadKey, string, string) (inbox.Record, error) {
	f.calls.Add(1)
	return inbox.Record{}, f.fail
}

func (f *fakeInbox) Snooze(context.Context, inbox.ThreadKey, string, string) (inbox.Record, error) {
	f.calls.Add(1)
	return inbox.Record{}, f.fail
}

func (f *fakeInbox) CreateNotification(context.Context, inbox.ThreadKey, []byte, string) (agent.NotificationResult, error) {
	f.calls.Add(1)
	return agent.NotificationResult{}, f.fail
}

func (f *fakeInbox) InboxToolList(context.Context, inbox.ThreadKey, agent.InboxToolQuery, bool) (agent.InboxToolPage, error) {
	f.calls.Add(1)
	return agent.InboxToolPage{}, f.fail
}

func (f *fakeInbox) InboxToolReadRecords(context.Context, inbox.ThreadKey, string, agent.InboxToolQuery) (agent.InboxToolRead, error) {
	f.calls.Add(1)
	return agent.InboxToolRead{}, f.fail
}

func (f *fakeInbox) CreateNotifications(context.Context, inbox.ThreadKey, []byte, string) ([]agent.NotificationResult, error) {
	f.calls.Add(1)
	return nil, f.fail
}

func serve(t *testing.T, f *fakeInbox, opts ...Option) (*Server, *httptest.Server) {
	t.Helper()
	s := New(f, append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	e := echo.New()
	s.Mount(e)
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return s, ts
}

func post(t *testing.T, url, auth, sessionID, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+Path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(raw)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// TestNoSessionOutlivesItsRequest plays a client that opens session after session
// (each with a made-up session id, as an attacker filling a session table would) and
// never closes them: the server keeps none, answers each statelessly, and has no stream
// to hold open.
func TestNoSessionOutlivesItsRequest(t *testing.T) {
	s, ts := serve(t, &fakeInbox{})
	for i := range 200 {
		forged := "" // a new session each, were the server to keep them
		if i%2 == 1 {
			forged = fmt.Sprintf("forged-%d", i)
		}
		resp, body := post(t, ts.URL, "Bearer "+token, forged, initialize)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		require.Empty(t, resp.Header.Get("Mcp-Session-Id"), "no session is handed out")
		require.Contains(t, body, `"serverInfo"`)
	}
	// A tool call needs no prior initialize and no session.
	resp, body := post(t, ts.URL, "Bearer "+token, "never-issued",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"inbox_list","arguments":{"resourceId":"r","threadId":"t"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `"notifications"`)

	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(m, ts.URL+Path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s holds nothing open", m)
	}
	ts.Close() // waits for every handler to return
	require.Zero(t, s.openSessions(), "sessions end with their request")
}

// TestUnauthenticatedRequestsCostNothing: without the token nothing is parsed or kept.
func TestUnauthenticatedRequestsCostNothing(t *testing.T) {
	f := &fakeInbox{}
	s, ts := serve(t, f)
	for i, auth := range []string{"", "Bearer wrong", "Basic " + token, "Bearer " + token + "x"} {
		resp, _ := post(t, ts.URL, auth, fmt.Sprintf("s-%d", i),
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"inbox_list","arguments":{"resourceId":"r","threadId":"t"}}}`)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, auth)
		require.Equal(t, `Bearer realm="signalgate"`, resp.Header.Get("WWW-Authenticate"))
	}
	ts.Close()
	require.Zero(t, f.calls.Load())
	require.Zero(t, s.openSessions())
}

// TestBodyIsBounded: a body over the limit is refused with 413 before it is parsed.
func TestBodyIsBounded(t *testing.T) {
	f := &fakeInbox{}
	_, ts := serve(t, f, WithMaxBody(4096))
	pad := strings.Repeat("a", 4096)
	resp, _ := post(t, ts.URL, "Bearer "+token, "",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"inbox_list","arguments":{"resourceId":"`+pad+`","threadId":"t"}}}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Zero(t, f.calls.Load())
	resp, body := post(t, ts.URL, "Bearer "+token, "", initialize)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, int64(DefaultMaxBody), New(f).maxBody, "1 MiB unless told")
}

// TestServerFaultsAreToolErrors: a failing database is a tool error that says so without
// describing the failure.
func TestServerFaultsAreToolErrors(t *testing.T) {
	f := &fakeInbox{fail: errors.New("pq: connection to 10.0.0.7 refused for user gateway")}
	_, ts := serve(t, f)
	for _, tool := range ToolNames {
		call := map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": MinimalArgs(tool, "r", "t")}}
		raw, err := json.Marshal(call)
		require.NoError(t, err)
		resp, body := post(t, ts.URL, "Bearer "+token, "", string(raw))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		var out struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out), body)
		require.True(t, out.Result.IsError, tool)
		require.Equal(t, "internal: "+tool+" failed on the gateway's side (logged); try again later", out.Result.Content[0].Text)
	}
	require.EqualValues(t, len(ToolNames), f.calls.Load())
}

// ToolNames are the tools the server lists.
var ToolNames = []string{"inbox_archive", "inbox_dismiss", "inbox_list", "inbox_read", "inbox_search", "inbox_snooze", "notification-inbox", "notify"}

// MinimalArgs are valid arguments for tool on thread (resource, thread), for the tests
// that call every tool.
func MinimalArgs(tool, resource, thread string) map[string]any {
	a := map[string]any{"resourceId": resource, "threadId": thread}
	switch tool {
	case "inbox_search":
		a["query"] = "x"
	case "inbox_dismiss", "inbox_archive":
		a["id"] = "x"
	case "inbox_snooze":
		a["id"], a["until"] = "x", "2030-01-01T00:00:00Z"
	case "notify":
		a["kind"], a["summary"] = "note", "x"
	case InboxToolName:
		a["action"] = "list"
	}
	return a
}

// TestBatchIsBounded: an old-protocol client may batch messages, but one request cannot
// carry more than maxBatch tool calls (each a database query).
func TestBatchIsBounded(t *testing.T) {
	f := &fakeInbox{}
	_, ts := serve(t, f)
	batch := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"inbox_list","arguments":{"resourceId":"r","threadId":"t"}}}`, i+1)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	resp, body := post(t, ts.URL, "Bearer "+token, "", batch(maxBatch+1))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, body, "at most 16 messages")
	require.Zero(t, f.calls.Load())

	resp, body = post(t, ts.URL, "Bearer "+token, "", batch(2))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var answers []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &answers), body)
	require.Len(t, answers, 2)
	require.EqualValues(t, 2, f.calls.Load())
}
