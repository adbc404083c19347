package inboxmcp

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// Watches is the watch service (watch.Service), as the agent API serves it.
type Watches interface {
	Create(ctx context.Context, k inbox.ThreadKey, req watch.Request) (watch.Watch, bool, error)
	List(ctx context.Context, f watch.Filter) (watch.Page, error)
	Delete(ctx context.Context, k inbox.ThreadKey, id string) (watch.Watch, error)
	// Sources are the sources a watch may name (the watch tool's enum).
	Sources() []string
}

// WithWatches offers the tools watch, unwatch and watches over w; without it they are
// not offered.
func WithWatches(w Watches) Option { return func(s *Server) { s.watches = w } }

type watchArgs struct {
	threadArgs
	Source    string   `json:"source" jsonschema:"What the resource belongs to: github, slack, email or generic."`
	Connector string   `json:"connector,omitempty" jsonschema:"The gateway connector to watch through; omit when you may use only one of that source (the error names them otherwise)."`
	Resource  string   `json:"resource" jsonschema:"What to watch: GitHub owner/repo#number (an issue or pull request) or owner/repo (a whole repository, where the connector allows it); Slack a channel id or channel/threadTs; email a Message-ID (the conversation that references it); generic a sourceId or netKey."`
	Kinds     []string `json:"kinds,omitempty" jsonschema:"Only notifications of these kinds (patterns such as pull_request.* allowed); omit for all."`
	Until     string   `json:"until,omitempty" jsonschema:"When the watch ends: an RFC 3339 time, or forever (kept past the PR's merge or the issue's close, still ending at the gateway's maximum). Give until or ttl, not both."`
	TTL       string   `json:"ttl,omitempty" jsonschema:"How long the watch lives: a duration (36h, 90m) or whole days (7d). Neither until nor ttl: the gateway's default (7 days unless configured)."`
	Priority  string   `json:"priority,omitempty" jsonschema:"The priority of the notifications the watch brings: low, medium, high or urgent; omit for each event's own."`
}

type unwatchArgs struct {
	threadArgs
	ID string `json:"id" jsonschema:"The watch's id, as watch or watches gave it."`
}

type watchesArgs struct {
	threadArgs
	Status string `json:"status,omitempty" jsonschema:"live (default), ended or all."`
	Limit  int    `json:"limit,omitempty" jsonschema:"Page size, 1 to 200 (default 50)."`
	Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor from the previous page, to continue."`
}

// watchCreated is the watch tool's answer: the watch, and whether this call made it.
type watchCreated struct {
	watch.Watch
	Created bool `json:"created"`
}

// watchPage is the watches tool's answer, paged like inbox_list.
type watchPage struct {
	Watches    []watch.Watch `json:"watches"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

func (s *Server) addWatchTools() {
	if s.watches == nil {
		return
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "watch",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema: schema[watchArgs](func(p map[string]*jsonschema.Schema) {
			for _, src := range s.watches.Sources() {
				p["source"].Enum = append(p["source"].Enum, src)
			}
			p["resource"].MinLength, p["resource"].MaxLength = ptr(1), ptr(watch.MaxResourceBytes)
			p["kinds"].MaxItems = ptr(watch.MaxKinds)
			p["kinds"].Items.MinLength, p["kinds"].Items.MaxLength = ptr(1), ptr(watch.MaxKindBytes)
			p["priority"].Enum = []any{string(inbox.PriorityLow), string(inbox.PriorityMedium), string(inbox.PriorityHigh), string(inbox.PriorityUrgent)}
		}),
		Description: "Hear about one thing on this thread until it is done: a GitHub pull request or issue, a Slack thread or channel, an email conversation, a generic object. " +
			"Its events reach this thread as notifications even where no route sends them here; nothing from before the watch counts. " +
			"The watch ends by itself at until / ttl, when the pull request is merged or the issue closed (unless until is forever), and the thread is then told once (a watch-ended notification). " +
			"Calling again for the same thing answers the existing watch (created false)."},
		s.watchTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "unwatch",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
		InputSchema: schema[unwatchArgs](idRequired),
		Description: "Stop a watch of this thread (no notification follows). Unwatching an ended watch answers it as it is."},
		s.unwatchTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "watches",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		InputSchema: schema[watchesArgs](func(p map[string]*jsonschema.Schema) {
			p["status"].Enum = []any{string(watch.StatusLive), string(watch.StatusEnded), "all"}
		}),
		Description: "List this thread's watches, newest first: live ones by default (expiresAt says until when), or ended ones (endReason says why: expired, merged, closed, deleted, operator)."},
		s.watchesTool)
}

func (s *Server) watchTool(ctx context.Context, req *mcp.CallToolRequest, a watchArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("watch", err)
	}
	w, created, err := s.watches.Create(ctx, k, watch.Request{Source: a.Source, Connector: a.Connector, Resource: a.Resource,
		Kinds: a.Kinds, Until: a.Until, TTL: a.TTL, Priority: inbox.Priority(a.Priority)})
	if err != nil {
		return nil, nil, s.watchError("watch", err)
	}
	return nil, watchCreated{Watch: w, Created: created}, nil
}

func (s *Server) unwatchTool(ctx context.Context, req *mcp.CallToolRequest, a unwatchArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("unwatch", err)
	}
	w, err := s.watches.Delete(ctx, k, a.ID)
	if err != nil {
		return nil, nil, s.watchError("unwatch", err)
	}
	return nil, w, nil
}

func (s *Server) watchesTool(ctx context.Context, req *mcp.CallToolRequest, a watchesArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("watches", err)
	}
	f := watch.Filter{Thread: &k, Status: watch.StatusLive, Limit: a.Limit, Cursor: a.Cursor}
	switch a.Status {
	case "", string(watch.StatusLive):
	case string(watch.StatusEnded):
		f.Status = watch.StatusEnded
	case "all":
		f.Status = ""
	}
	if f.Limit == 0 {
		f.Limit = defaultWatchLimit
	}
	p, err := s.watches.List(ctx, f)
	if err != nil {
		return nil, nil, s.watchError("watches", err)
	}
	out := watchPage{Watches: p.Watches, NextCursor: p.Next}
	if out.Watches == nil {
		out.Watches = []watch.Watch{}
	}
	return nil, out, nil
}

// defaultWatchLimit is the watches tool's page without limit, as the agent API's.
const defaultWatchLimit = 50

// watchError answers the watch service's refusals with the agent API's codes and
// messages.
func (s *Server) watchError(tool string, err error) error {
	code, ok := watch.Code(err)
	if !ok {
		return s.toolError(tool, err)
	}
	return fmt.Errorf("%s: %s", code, watch.Message(err))
}
