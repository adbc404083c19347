package channel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolTimeout bounds one proxied call or listing.
const toolTimeout = 60 * time.Second

// toolProxy offers the gateway's MCP tools (/mcp: the inbox tools, notification-inbox,
// reply, watch…) to the session. The definitions are the gateway's, read at start and
// on every stream reconnect (a reload may change them); only resourceId and threadId
// stop being required, since a call without them acts on the channel's thread.
type toolProxy struct {
	s *Server

	mu      sync.Mutex
	session *mcp.ClientSession
	offered map[string][]byte // tool name → its definition as offered
}

func newToolProxy(s *Server) *toolProxy {
	return &toolProxy{s: s, offered: map[string][]byte{}}
}

// load offers the gateway's tools before the client lists them; a gateway that is not
// up yet has them offered on the first stream connection instead.
func (p *toolProxy) load(ctx context.Context) { p.sync(ctx) }

func (s *Server) syncTools(ctx context.Context) { s.tools.sync(ctx) }

// sync brings the offered tools in step with the gateway's.
func (p *toolProxy) sync(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cs, err := p.connect(ctx)
	if err != nil {
		p.s.log.Warn("could not read the gateway's tools; retrying on the next stream connection", "error", err.Error())
		return
	}
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			p.drop()
			p.s.log.Warn("could not read the gateway's tools; retrying on the next stream connection", "error", err.Error())
			return
		}
		seen[t.Name] = true
		p.offer(t)
	}
	p.mu.Lock()
	var gone []string
	for name := range p.offered {
		if !seen[name] {
			gone = append(gone, name)
			delete(p.offered, name)
		}
	}
	p.mu.Unlock()
	if len(gone) > 0 {
		p.s.mcp.RemoveTools(gone...)
	}
}

// offer adds or replaces t unless it is offered as it is.
func (p *toolProxy) offer(t *mcp.Tool) {
	schema, ok := t.InputSchema.(map[string]any)
	if !ok || schema["type"] != "object" {
		p.s.log.Warn("skipped a gateway tool without an object input schema", "tool", t.Name)
		return
	}
	t.InputSchema = threadOptional(schema)
	def, err := json.Marshal(t)
	if err != nil {
		return
	}
	p.mu.Lock()
	same := bytes.Equal(p.offered[t.Name], def)
	p.offered[t.Name] = def
	p.mu.Unlock()
	if !same {
		name := t.Name
		p.s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return p.call(ctx, name, req.Params.Arguments)
		})
	}
}

// threadOptional is a tool's input schema with resourceId and threadId no longer
// required: the proxy fills in the channel's thread.
func threadOptional(schema map[string]any) map[string]any {
	req, ok := schema["required"].([]any)
	if !ok {
		return schema
	}
	kept := []any{}
	for _, r := range req {
		if r != "resourceId" && r != "threadId" {
			kept = append(kept, r)
		}
	}
	schema["required"] = kept
	return schema
}

// call forwards one call with the channel's thread as its default, and answers what
// the gateway answered.
func (p *toolProxy) call(ctx context.Context, name string, raw json.RawMessage) (*mcp.CallToolResult, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return toolError("arguments: want a JSON object"), nil
		}
	}
	if args["resourceId"] == nil && args["threadId"] == nil {
		args["resourceId"], args["threadId"] = p.s.thread.Resource, p.s.thread.Thread
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cs, err := p.connect(ctx)
	if err != nil {
		return toolError(fmt.Sprintf("the gateway could not be reached (%v); try again", err)), nil
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.drop()
		return toolError(fmt.Sprintf("%s failed on the way to the gateway (%v); try again (a reply with the same id is not sent twice)", name, err)), nil
	}
	return res, nil
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// connect returns the session with the gateway's /mcp, opening one when needed. The
// endpoint is stateless: a session survives a gateway restart.
func (p *toolProxy) connect(ctx context.Context) (*mcp.ClientSession, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session != nil {
		return p.session, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "signalgate-channel", Version: p.s.version}, nil)
	hc := *p.s.http
	hc.Transport = bearer{token: p.s.token, next: p.s.http.Transport}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: p.s.base + "/mcp", HTTPClient: &hc, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to the gateway's MCP endpoint: %w", err)
	}
	p.session = cs
	return cs, nil
}

// drop forgets the session after a failure; the next call opens another.
func (p *toolProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session != nil {
		_ = p.session.Close()
		p.session = nil
	}
}

// bearer adds the agent's token to the requests to /mcp.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}
