package inboxmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// InboxToolName is the Mastra-compatible tool's name, Mastra's tool id.
const InboxToolName = "notification-inbox"

// inboxToolArgs are Mastra's notification-inbox input, with the thread named as every
// tool here names it (Mastra takes the thread from the agent's context).
type inboxToolArgs struct {
	Action string `json:"action" jsonschema:"list: unread notifications (or those of status), newest first; search: notifications matching query in any status; read: hand unread notifications to this thread in full as notification signals; markSeen, dismiss, archive: move the notification id."`
	threadArgs
	ID       string `json:"id,omitempty" jsonschema:"Notification id. Required for markSeen, dismiss and archive; optional for read (that one notification)."`
	Status   string `json:"status,omitempty" jsonschema:"Status filter for list, read or search."`
	Priority string `json:"priority,omitempty" jsonschema:"Priority filter for list, read or search."`
	Source   string `json:"source,omitempty" jsonschema:"Source filter for list, read or search (e.g. github, slack, email)."`
	Query    string `json:"query,omitempty" jsonschema:"Search query (case-insensitive, in summary, kind or source). Required when action is search."`
	Limit    int    `json:"limit,omitempty" jsonschema:"Maximum records to return (list, search) or read, 1 to 200. Defaults to 20; the response reports hasMore when more remain."`
}

func (s *Server) addInboxTool() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: InboxToolName,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		InputSchema: schema[inboxToolArgs](func(p map[string]*jsonschema.Schema) {
			p["action"].Enum = []any{"list", "read", "markSeen", "dismiss", "archive", "search"}
			p["status"].Enum = []any{"pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed", "superseded", "snoozed"}
			p["priority"].Enum = []any{"low", "medium", "high", "urgent"}
			p["id"].MaxLength = ptr(maxID)
			p["source"].MinLength, p["source"].MaxLength = ptr(1), ptr(maxID)
			p["query"].MaxLength = ptr(maxQuery)
		}),
		Description: "Inspect and manage the current thread notification inbox, as Mastra's notification-inbox tool. Use this to list unread notifications, read full details after a summary, mark notifications seen, dismiss, archive, or search old notifications. " +
			"Listing, reading, or searching automatically marks the returned unread notifications as seen; list defaults to unread notifications unless a status is given. " +
			"read delivers the notifications' contents to this thread as notification signals instead of returning them as tool output. " +
			"To look without marking anything, use inbox_list, inbox_search and inbox_read's ids."},
		s.inboxTool)
}

func (s *Server) inboxTool(ctx context.Context, req *mcp.CallToolRequest, a inboxToolArgs) (*mcp.CallToolResult, any, error) {
	// Refused before the thread is resolved, as Mastra's schema refuses them.
	switch {
	case a.Action == "search" && strings.TrimSpace(a.Query) == "":
		return nil, nil, s.toolError(InboxToolName, agent.NewError(agent.KindInvalid, "bad_request", "notification-inbox search requires query"))
	case (a.Action == "markSeen" || a.Action == "dismiss" || a.Action == "archive") && strings.TrimSpace(a.ID) == "":
		return nil, nil, s.toolError(InboxToolName, agent.NewError(agent.KindInvalid, "bad_request", "notification-inbox %s requires id", a.Action))
	}
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError(InboxToolName, err)
	}
	q := agent.InboxToolQuery{Status: inbox.Status(a.Status), Priority: inbox.Priority(a.Priority), Source: a.Source, Query: a.Query, Limit: a.Limit}
	var out any
	switch a.Action {
	case "list", "search":
		var page agent.InboxToolPage
		if page, err = s.inbox.InboxToolList(ctx, k, q, a.Action == "search"); err == nil {
			out, err = s.projected(page)
		}
	case "read":
		out, err = s.inbox.InboxToolReadRecords(ctx, k, a.ID, q)
	default:
		var rec inbox.Record
		if rec, err = s.inbox.ActOn(ctx, k, a.ID, map[string]string{"markSeen": "seen", "dismiss": "dismiss", "archive": "archive"}[a.Action]); err == nil {
			out = map[string]any{"notification": rec}
		}
	}
	if err != nil {
		return nil, nil, s.toolError(InboxToolName, err)
	}
	return nil, out, nil
}

// projected is a page as Mastra's tool answers it: each record without its payload and
// metadata (bookkeeping that can be kilobytes per record; read delivers the contents),
// but with the metadata's replyTo, where an answer goes.
func (s *Server) projected(p agent.InboxToolPage) (map[string]any, error) {
	notes := make([]map[string]any, len(p.Notifications))
	for i, r := range p.Notifications {
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode record %s: %w", r.ID, err)
		}
		if err := json.Unmarshal(raw, &notes[i]); err != nil {
			return nil, fmt.Errorf("decode record %s: %w", r.ID, err)
		}
		delete(notes[i], "payload")
		delete(notes[i], "metadata")
		if to := s.replyToOf(r); to != nil {
			notes[i]["replyTo"] = to
		}
	}
	return map[string]any{"notifications": notes, "hasMore": p.HasMore, "markedSeen": p.MarkedSeen}, nil
}
