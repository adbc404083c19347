package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Claude Code's channel protocol: the experimental capabilities a server declares in its
// initialize result, and the notifications both ways.
const (
	// CapabilityChannel makes Claude Code register the server as a channel.
	CapabilityChannel = "claude/channel"
	// CapabilityPermission makes Claude Code relay its permission prompts to the server.
	CapabilityPermission = "claude/channel/permission"
	// MethodChannel is a pushed event, server to Claude Code: {content, meta}.
	MethodChannel = "notifications/claude/channel"
	// MethodPermissionRequest is a permission prompt, Claude Code to server.
	MethodPermissionRequest = "notifications/claude/channel/permission_request"
	// MethodPermission is the verdict, server to Claude Code: {request_id, behavior}.
	MethodPermission = "notifications/claude/channel/permission"
)

// tapTransport hands the MCP SDK a connection this package can also write to and read
// from. go-sdk v1.8.0 has no API to send a notification of a method it does not know,
// and drops incoming notifications it does not know before user code sees them; both
// channel notifications are such methods, so they go around the SDK at the connection.
type tapTransport struct {
	inner mcp.Transport
	// requests receives the permission prompts read off the connection.
	requests chan<- permissionRequest

	mu   sync.Mutex
	conn *tapConn
}

func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Connection: c, requests: t.requests}
	t.mu.Lock()
	t.conn = tc
	t.mu.Unlock()
	return tc, nil
}

// notify writes a notification of method with params to the connected client.
func (t *tapTransport) notify(ctx context.Context, method string, params any) error {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c == nil {
		return errors.New("no client connected")
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	// A request without an id is a notification.
	if err := c.Write(ctx, &jsonrpc.Request{Method: method, Params: raw}); err != nil {
		return fmt.Errorf("write %s: %w", method, err)
	}
	return nil
}

// tapConn takes Claude Code's permission prompts off the connection before the SDK
// reads it.
type tapConn struct {
	mcp.Connection
	requests chan<- permissionRequest
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return m, err
		}
		r, ok := m.(*jsonrpc.Request)
		if !ok || r.ID.IsValid() || r.Method != MethodPermissionRequest {
			return m, nil
		}
		var p permissionRequest
		if err := json.Unmarshal(r.Params, &p); err != nil || p.RequestID == "" {
			continue // a notification has no answer to carry an error; Claude Code's own prompt stays up
		}
		select {
		case c.requests <- p:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// permissionRequest is Claude Code's permission prompt (the fields the relay uses).
type permissionRequest struct {
	RequestID    string `json:"request_id"`
	ToolName     string `json:"tool_name"`
	Description  string `json:"description"`
	InputPreview string `json:"input_preview"`
}

// permissionVerdict answers a permission prompt.
type permissionVerdict struct {
	RequestID string `json:"request_id"`
	Behavior  string `json:"behavior"` // allow or deny
}
