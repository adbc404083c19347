package channel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// fakeGateway serves what the channel reads: the thread's stream (frames the test
// hands it, one connection at a time), /mcp with a reply tool, and approvals.
type fakeGateway struct {
	t         *testing.T
	srv       *httptest.Server
	conns     chan streamConn     // one per stream request
	approvals chan map[string]any // POST …/approvals bodies
}

// streamConn is one stream connection: its Last-Event-ID and ?after, and the frames
// to write (closing frames ends the connection).
type streamConn struct {
	lastEventID, after string
	frames             chan string
}

const threadPath = "/v1/agents/coder/threads/acme%2Fapi/acme%2Fapi%237"

func newFakeGateway(t *testing.T) *fakeGateway {
	g := &fakeGateway{t: t, conns: make(chan streamConn, 4), approvals: make(chan map[string]any, 4)}
	tools := mcp.NewServer(&mcp.Implementation{Name: "signalgate"}, nil)
	type replyArgs struct {
		ResourceID string `json:"resourceId"`
		ThreadID   string `json:"threadId"`
		ID         string `json:"id"`
		Text       string `json:"text"`
	}
	mcp.AddTool(tools, &mcp.Tool{Name: "reply", Description: "answer"}, func(_ context.Context, _ *mcp.CallToolRequest, a replyArgs) (*mcp.CallToolResult, any, error) {
		return nil, map[string]string{"to": a.ResourceID + " " + a.ThreadID, "id": a.ID}, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer coder-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET "+threadPath+"/stream", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "Bearer coder-token", r.Header.Get("Authorization"))
		c := streamConn{lastEventID: r.Header.Get("Last-Event-ID"), after: r.URL.Query().Get("after"), frames: make(chan string)}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case g.conns <- c:
		case <-r.Context().Done():
			return
		}
		for {
			select {
			case f, ok := <-c.frames:
				if !ok {
					return
				}
				_, _ = io.WriteString(w, f)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST "+threadPath+"/approvals", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		g.approvals <- body
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"apr_1","status":"pending"}`)
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGateway) conn() streamConn {
	g.t.Helper()
	select {
	case c := <-g.conns:
		return c
	case <-time.After(30 * time.Second):
		g.t.Fatal("the channel did not open the stream")
		return streamConn{}
	}
}

// signalFrame is an SSE signal frame as the agent API writes it.
func signalFrame(seq int, id, action, xml string, metadata string) string {
	return fmt.Sprintf("id: %d\nevent: signal\ndata: {\"id\":%q,\"seq\":%d,\"runId\":\"run_1\",\"action\":%q,\"type\":\"notification\",\"tagName\":\"notification\",\"xml\":%q,\"metadata\":%s}\n\n",
		seq, id, seq, action, xml, metadata)
}

// client plays Claude Code over a pipe, one JSON-RPC message a line.
type client struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
	mu  sync.Mutex
}

func (c *client) send(msg string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, msg+"\n")
	require.NoError(c.t, err)
}

// next reads the next message the server wrote.
func (c *client) next() map[string]any {
	c.t.Helper()
	require.True(c.t, c.out.Scan(), "the server closed its output: %v", c.out.Err())
	var m map[string]any
	require.NoError(c.t, json.Unmarshal(c.out.Bytes(), &m), "%s", c.out.Text())
	return m
}

// nextMethod skips to the next message of method (others: list_changed and such).
func (c *client) nextMethod(method string) map[string]any {
	c.t.Helper()
	for {
		m := c.next()
		if m["method"] == method {
			return m
		}
	}
}

func (c *client) nextID(id string) map[string]any {
	c.t.Helper()
	for {
		m := c.next()
		if m["id"] == id {
			return m
		}
	}
}

func startChannel(t *testing.T, g *fakeGateway) (*Server, *client) {
	t.Helper()
	s, err := New(Config{URL: g.srv.URL, Token: "coder-token", Agent: "coder", Resource: "acme/api", Thread: "acme/api#7",
		Permissions: true, Backoff: time.Millisecond, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, &mcp.IOTransport{Reader: inR, Writer: outW}) }()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
		<-done
	})
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return s, &client{t: t, in: inW, out: sc}
}

// TestChannelHandshake: Claude Code probes server/discover first; a server answering it
// is a "modern" connection on which Claude Code never registers a channel, so the
// probe must be refused and initialize (2025-11-25) must declare the channel.
func TestChannelHandshake(t *testing.T) {
	g := newFakeGateway(t)
	_, c := startChannel(t, g)
	// The probe as Claude Code 2.1.337 sends it.
	c.send(`{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"claude-code","title":"Claude Code","version":"2.1.337","description":"Anthropic's agentic coding tool","websiteUrl":"https://claude.com/claude-code"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}}}}}`)
	probe := c.nextID("server-discover-probe-1")
	require.Contains(t, probe, "error", "server/discover answered: %v", probe)
	require.NotContains(t, probe, "result")

	c.send(`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"claude-code","version":"2.1.337"}}}`)
	init := c.next()
	res := init["result"].(map[string]any)
	require.Equal(t, "2025-11-25", res["protocolVersion"])
	exp := res["capabilities"].(map[string]any)["experimental"].(map[string]any)
	require.Contains(t, exp, "claude/channel")
	require.Contains(t, exp, "claude/channel/permission")
	require.Contains(t, res["instructions"], "reply tool")
	for _, v := range ProtocolVersions() {
		require.LessOrEqual(t, v, "2025-11-25")
	}
}

// TestChannelNotifications: after initialized the channel follows the stream and sends
// each signal as notifications/claude/channel (content the XML, meta string values
// with identifier keys), in order, holds a signal written without waking until the next
// one, skips run frames, resumes with Last-Event-ID after the stream drops without
// sending a frame twice, relays a permission prompt as an approval and answers it when
// the decision arrives, and proxies the gateway's tools with the channel's thread.
func TestChannelNotifications(t *testing.T) {
	g := newFakeGateway(t)
	_, c := startChannel(t, g)
	c.send(`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.337"}}}`)
	c.nextID("1")
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	first := g.conn()
	require.Equal(t, "", first.lastEventID)
	require.Equal(t, "latest", first.after)
	slackMeta := `{"notification":{"signal":"notification","source":"slack","kind":"mention","priority":"high"},"replyTo":{"source":"slack","connector":"acme","channel":"D1","ts":"1700000000.1"}}`
	first.frames <- "id: 3\n\n" // ?after=latest's position
	first.frames <- signalFrame(4, "sig_a", "wake", `<notification id="rec_a" source="slack">Jane: deploy?</notification>`, slackMeta)
	first.frames <- "id: 5\nevent: run\ndata: {\"id\":\"f5\",\"seq\":5,\"runId\":\"run_1\",\"status\":\"finished\"}\n\n"
	first.frames <- signalFrame(6, "sig_b", "persist", `<note>kept for later</note>`, `{}`)
	first.frames <- signalFrame(7, "sig_c", "deliver", `<notification id="rec_c">CI failed</notification>`, `{"notification":{"source":"github","priority":"urgent","coalescedCount":2}}`)

	n := c.nextMethod(MethodChannel)["params"].(map[string]any)
	require.Equal(t, `<notification id="rec_a" source="slack">Jane: deploy?</notification>`, n["content"])
	require.Equal(t, map[string]any{"signal_id": "sig_a", "run_id": "run_1", "priority": "high", "signal_source": "slack", "kind": "mention",
		"replyTo": `{"channel":"D1","connector":"acme","source":"slack","ts":"1700000000.1"}`}, n["meta"])
	n = c.nextMethod(MethodChannel)["params"].(map[string]any)
	require.Equal(t, "sig_b", n["meta"].(map[string]any)["signal_id"], "the held signal goes first")
	n = c.nextMethod(MethodChannel)["params"].(map[string]any)
	require.Equal(t, "sig_c", n["meta"].(map[string]any)["signal_id"])
	close(first.frames) // the stream drops

	second := g.conn()
	require.Equal(t, "7", second.lastEventID, "resumes after the last frame")
	second.frames <- signalFrame(7, "sig_c", "deliver", `<notification id="rec_c">CI failed</notification>`, `{}`) // sent again by mistake
	second.frames <- signalFrame(8, "sig_d", "deliver", `<notification id="rec_d">next</notification>`, `{}`)
	n = c.nextMethod(MethodChannel)["params"].(map[string]any)
	require.Equal(t, "sig_d", n["meta"].(map[string]any)["signal_id"], "a frame is sent once")

	// A permission prompt becomes an approval; its decision on the stream answers it.
	c.send(`{"jsonrpc":"2.0","method":"notifications/claude/channel/permission_request","params":{"request_id":"abcde","tool_name":"Bash","description":"Run the deploy script","input_preview":"{\"command\":\"./deploy.sh\"}"}}`)
	var a map[string]any
	select {
	case a = <-g.approvals:
	case <-time.After(30 * time.Second):
		t.Fatal("no approval requested")
	}
	require.Equal(t, "Bash", a["tool"])
	require.Equal(t, "Run the deploy script", a["description"])
	require.Equal(t, map[string]any{"command": "./deploy.sh"}, a["arguments"])
	id := a["id"].(string)
	require.Regexp(t, `^claude-code/[A-Za-z0-9]+/abcde$`, id)
	second.frames <- fmt.Sprintf("id: 9\nevent: signal\ndata: {\"id\":\"approval-apr_1\",\"seq\":9,\"action\":\"deliver\",\"tagName\":\"approval\",\"xml\":\"<approval/>\",\"metadata\":{\"approval\":{\"id\":\"apr_1\",\"toolCallId\":%q,\"decision\":\"approved\"}}}\n\n", id)
	v := c.nextMethod(MethodPermission)
	require.Equal(t, map[string]any{"request_id": "abcde", "behavior": "allow"}, v["params"])
	second.frames <- signalFrame(10, "sig_e", "deliver", `<notification>after</notification>`, `{}`)
	m := c.nextMethod(MethodChannel) // the decision itself is not a channel message
	require.Equal(t, "sig_e", m["params"].(map[string]any)["meta"].(map[string]any)["signal_id"])

	// The gateway's tools, with the channel's thread when the call names none.
	c.send(`{"jsonrpc":"2.0","id":"2","method":"tools/list"}`)
	list := c.nextID("2")["result"].(map[string]any)["tools"].([]any)
	require.Len(t, list, 1)
	tool := list[0].(map[string]any)
	require.Equal(t, "reply", tool["name"])
	require.NotContains(t, tool["inputSchema"].(map[string]any)["required"], "threadId")
	c.send(`{"jsonrpc":"2.0","id":"3","method":"tools/call","params":{"name":"reply","arguments":{"id":"r1","text":"on it"}}}`)
	res := c.nextID("3")["result"].(map[string]any)
	require.Equal(t, map[string]any{"to": "acme/api acme/api#7", "id": "r1"}, res["structuredContent"])
}

func TestNotificationMeta(t *testing.T) {
	// Values are strings; a number in metadata is written as text.
	n := notification(frame{ID: "s1", XML: "<x/>", Metadata: map[string]any{"notification": map[string]any{"priority": 3.0}}})
	require.Equal(t, map[string]string{"signal_id": "s1", "priority": "3"}, n.Meta)
	raw, err := json.Marshal(n)
	require.NoError(t, err)
	require.JSONEq(t, `{"content":"<x/>","meta":{"signal_id":"s1","priority":"3"}}`, string(raw))
	// A signal without an id (transient) and metadata has no meta at all.
	raw, err = json.Marshal(notification(frame{XML: "hello"}))
	require.NoError(t, err)
	require.JSONEq(t, `{"content":"hello"}`, string(raw))

	for status, want := range map[string]string{"approved": "allow", "declined": "deny", "expired": "deny", "pending": ""} {
		v, ok := verdictOf(frame{TagName: "approval", Metadata: map[string]any{"approval": map[string]any{"toolCallId": "claude-code/x1/qwert", "decision": status}}})
		require.True(t, ok)
		require.Equal(t, permissionVerdict{RequestID: "qwert", Behavior: want}, v)
	}
	_, ok := verdictOf(frame{TagName: "approval", Metadata: map[string]any{"approval": map[string]any{"toolCallId": "deploy-1", "decision": "approved"}}})
	require.False(t, ok, "an approval the agent asked for itself is a signal like any other")
}
