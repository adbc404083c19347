package inboxmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// threadArgs name the thread every tool works on.
type threadArgs struct {
	ResourceID string `json:"resourceId" jsonschema:"The resource the thread belongs to, as the gateway's routes name it (for a GitHub route typically the repository, e.g. acme/api)."`
	ThreadID   string `json:"threadId" jsonschema:"The conversation thread within the resource (e.g. acme/api#42 or dm:U123)."`
	AgentID    string `json:"agentId,omitempty" jsonschema:"Optional. The agent whose thread this is; defaults to the agent of the token you authenticated with, and only that agent's threads are accessible."`
}

type filterArgs struct {
	Status []string `json:"status,omitempty" jsonschema:"Statuses to include: pending (not yet delivered in full), delivered, seen, dismissed, archived, discarded, failed, superseded (replaced by a newer state of the same thing), snoozed (hidden until a time by inbox_snooze), or all."`
	Source []string `json:"source,omitempty" jsonschema:"Only these sources (e.g. github, slack, email, or a generic connector's source)."`
	Kind   []string `json:"kind,omitempty" jsonschema:"Only these kinds (e.g. ci-failure, review-requested, mention)."`
	Limit  int      `json:"limit,omitempty" jsonschema:"Page size, 1 to 200 (default 50)."`
	Cursor string   `json:"cursor,omitempty" jsonschema:"nextCursor from the previous page, to continue."`
}

type listArgs struct {
	threadArgs
	filterArgs
}

type searchArgs struct {
	threadArgs
	Query string `json:"query" jsonschema:"Text to find, case-insensitive, in the summary, kind or source."`
	filterArgs
}

type readArgs struct {
	threadArgs
	IDs []string `json:"ids,omitempty" jsonschema:"Notification ids to read whatever their status; omit to read the unread (pending) ones, oldest first."`
}

type actArgs struct {
	threadArgs
	ID string `json:"id" jsonschema:"The notification id (from inbox_list, inbox_search or inbox_read)."`
}

type snoozeArgs struct {
	actArgs
	Until string `json:"until" jsonschema:"When to hear of it again: an RFC 3339 time in the future, at most 30 days ahead (e.g. 2026-01-02T09:00:00Z)."`
}

// notifyBody is the agent API's create-notification body, sent as is.
type notifyBody struct {
	Summary     string         `json:"summary,omitempty" jsonschema:"What happened or what to do, in a sentence a model can act on: this is what the thread's agent sees. Required unless notifications is given."`
	Kind        string         `json:"kind,omitempty" jsonschema:"A short label of what this is (e.g. reminder, handoff, ci-failure); dedupe and coalescing group by it. Required unless notifications is given."`
	Source      string         `json:"source,omitempty" jsonschema:"Where it comes from (default agent-api)."`
	SourceID    string         `json:"sourceId,omitempty" jsonschema:"The id of the object it is about in its source system (an issue number, a message id): kept and returned, never used to merge."`
	Priority    string         `json:"priority,omitempty" jsonschema:"urgent and high reach the agent at once (waking an idle thread); medium (default) wakes an idle thread and is summarised to a busy one; low waits for the next summary."`
	Payload     map[string]any `json:"payload,omitempty" jsonschema:"Structured data kept with the notification for inbox_read; not shown to the model in the notification itself."`
	Attributes  map[string]any `json:"attributes,omitempty" jsonschema:"A few string, number or boolean attributes rendered on the notification's XML tag."`
	DedupeKey   string         `json:"dedupeKey,omitempty" jsonschema:"A pending notification of the same thread, source and kind with this key is updated instead of a new one created."`
	CoalesceKey string         `json:"coalesceKey,omitempty" jsonschema:"Like dedupeKey, and the merged notification counts how many it absorbed."`
	DeliveryID  string         `json:"deliveryId,omitempty" jsonschema:"An id of your choice that makes a retried call a no-op."`
}

type notifyArgs struct {
	threadArgs
	notifyBody
	// Notifications creates several at once instead (Mastra's array form).
	Notifications []notifyBody `json:"notifications,omitempty" jsonschema:"Up to 100 notifications to create at once instead of one; the answer's results follow their order."`
}

// listed is a notification as listings show it: what a model needs to choose, without
// the payload (inbox_read has it).
type listed struct {
	ID             string           `json:"id"`
	Source         string           `json:"source"`
	Kind           string           `json:"kind"`
	Priority       inbox.Priority   `json:"priority"`
	Status         inbox.Status     `json:"status"`
	Summary        string           `json:"summary"`
	Attributes     inbox.Attributes `json:"attributes,omitempty"`
	CoalescedCount int              `json:"coalescedCount,omitempty"`
	CreatedAt      time.Time        `json:"createdAt"`
	DeliveredAt    *time.Time       `json:"deliveredAt,omitempty"`
	SnoozedUntil   *time.Time       `json:"snoozedUntil,omitempty"`
	// ReplyTo is where an answer to it goes (the reply tool's replyTo).
	ReplyTo *reply.To `json:"replyTo,omitempty"`
}

func (s *Server) listedOf(r inbox.Record) listed {
	out := listed{ID: r.ID, Source: r.Source, Kind: r.Kind, Priority: r.Priority, Status: r.Status, Summary: r.Summary,
		Attributes: r.Attributes, CreatedAt: r.CreatedAt, DeliveredAt: r.DeliveredAt, SnoozedUntil: r.SnoozedUntil,
		ReplyTo: s.replyToOf(r)}
	if r.CoalescedCount > 1 {
		out.CoalescedCount = r.CoalescedCount
	}
	return out
}

type page struct {
	Notifications []listed `json:"notifications"`
	NextCursor    string   `json:"nextCursor,omitempty"`
}

// Input bounds the schemas state (the agent API checks them again).
const (
	maxID         = 512
	maxFilterList = 20
	maxIDs        = 100
	maxQuery      = 512
)

func (s *Server) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	moves := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}

	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_list", Annotations: readOnly, InputSchema: schema[listArgs](nil),
		Description: "List the notifications waiting in one of your threads' inbox (GitHub, Slack, email and webhook events the gateway routed to the thread), newest first. " +
			"Use it to see what is new or what happened on a thread. It only looks: nothing is marked seen and scheduled deliveries go ahead. " +
			"By default it shows pending (not yet delivered in full) and delivered notifications; filter by status, source and kind, and pass nextCursor to continue. " +
			"Entries carry the summary only: use inbox_read for the payload."},
		s.listTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_search", Annotations: readOnly,
		InputSchema: schema[searchArgs](func(p map[string]*jsonschema.Schema) {
			p["query"].MinLength, p["query"].MaxLength = ptr(1), ptr(maxQuery)
		}),
		Description: "Search one of your threads' inbox for notifications whose summary, kind or source contains the query (case-insensitive), newest first, in every status unless you filter. " +
			"Use it to find a particular earlier event (\"the CI failure on main\", \"Jane's question\") rather than to see what is new. It only looks and changes nothing."},
		s.searchTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_read", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		InputSchema: schema[readArgs](func(p map[string]*jsonschema.Schema) {
			p["ids"].MaxItems = ptr(maxIDs)
			p["ids"].Items.MinLength = ptr(1)
		}),
		Description: "Read notifications in full, with their payload (the event's data) and the XML the notification renders as, and mark them seen. " +
			"Without ids it reads the unread (pending) ones, oldest first, at most 100; with ids it reads those, whatever their status. " +
			"Use it when you are about to act on notifications: one you have read is not delivered to you again."},
		s.readTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_dismiss", Annotations: moves, InputSchema: schema[actArgs](idRequired),
		Description: "Dismiss one notification: it needs no (further) action. It leaves the default listing and is not delivered. " +
			"Use inbox_archive instead for something handled that you may want to look up later."},
		s.actTool("inbox_dismiss", "dismiss"))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_archive", Annotations: moves, InputSchema: schema[actArgs](idRequired),
		Description: "Archive one notification: handled, kept out of the way but findable (inbox_search, or inbox_list with status archived). " +
			"Use it for things you have dealt with and may want to refer to; use inbox_dismiss for things that need no action at all."},
		s.actTool("inbox_archive", "archive"))
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "inbox_snooze", Annotations: moves,
		InputSchema: schema[snoozeArgs](func(p map[string]*jsonschema.Schema) {
			idRequired(p)
			p["until"].MinLength, p["until"].MaxLength = ptr(1), ptr(64)
		}),
		Description: "Snooze one pending notification until a time (at most 30 days ahead): until then it is not delivered or summarised to you. " +
			"Then it comes back as if it had just arrived. Use it for something you will deal with later (\"remind me after the release\"); " +
			"inbox_list with status snoozed shows what you have snoozed. A duplicate or update of it meanwhile stays snoozed with it, unless it is urgent."},
		s.snoozeTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "notify", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
		InputSchema: schema[notifyArgs](func(p map[string]*jsonschema.Schema) {
			p["summary"].MinLength = ptr(1)
			p["kind"].MinLength, p["kind"].MaxLength = ptr(1), ptr(inbox.MaxLabelBytes)
			p["source"].MaxLength = ptr(inbox.MaxLabelBytes)
			p["sourceId"].MaxLength = ptr(inbox.MaxKeyBytes)
			p["notifications"].MaxItems = ptr(agent.MaxNotificationBatch)
			p["priority"].Enum = []any{"low", "medium", "high", "urgent"}
			for _, k := range []string{"dedupeKey", "coalesceKey", "deliveryId"} {
				p[k].MaxLength = ptr(maxID)
			}
		}),
		Description: "Create a notification on one of your threads, through the same inbox as the webhooks: deduplicated, coalesced and delivered by the gateway's policy " +
			"(urgent and high reach the thread's agent at once, low waits for the next summary). " +
			"Use it to leave a note or a reminder for a thread, or to hand work from this conversation to another one."},
		s.notifyTool)
}

// schema is T's input schema with the thread ids and list bounds every tool shares;
// tune adds a tool's own.
func schema[T any](tune func(map[string]*jsonschema.Schema)) *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("inboxmcp: schema of %T: %v", *new(T), err)) // a programming error, caught by every test
	}
	p := sc.Properties
	for _, k := range []string{"resourceId", "threadId", "agentId", "cursor"} {
		if f, ok := p[k]; ok {
			f.MinLength, f.MaxLength = ptr(1), ptr(maxID)
		}
	}
	for _, k := range []string{"status", "source", "kind"} {
		if f, ok := p[k]; ok && f.Items != nil {
			f.Type, f.Types = "array", nil
			f.MaxItems = ptr(maxFilterList)
			f.Items.MinLength, f.Items.MaxLength = ptr(1), ptr(maxID)
		}
	}
	if f, ok := p["limit"]; ok {
		f.Minimum, f.Maximum = ptr(1.0), ptr(200.0)
	}
	if f, ok := p["ids"]; ok {
		f.Type, f.Types = "array", nil
		f.Items.MaxLength = ptr(maxID)
	}
	if tune != nil {
		tune(p)
	}
	return sc
}

func idRequired(p map[string]*jsonschema.Schema) {
	p["id"].MinLength, p["id"].MaxLength = ptr(1), ptr(maxID)
}

func ptr[T any](v T) *T { return &v }

// thread resolves a tool's thread through the agent operations' authorization, and bounds the
// call's time.
func (s *Server) thread(ctx context.Context, req *mcp.CallToolRequest, a threadArgs) (context.Context, context.CancelFunc, inbox.ThreadKey, error) {
	caller := ""
	if ti := req.Extra.TokenInfo; ti != nil {
		caller = ti.UserID
	}
	if caller == "" {
		return ctx, func() {}, inbox.ThreadKey{}, agent.Unauthenticated()
	}
	agentID := a.AgentID
	if agentID == "" {
		agentID = caller
	}
	k, err := s.inbox.Thread(caller, agentID, a.ResourceID, a.ThreadID)
	if err != nil {
		return ctx, func() {}, k, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	return ctx, cancel, k, nil
}

func (f filterArgs) params() agent.ListParams {
	return agent.ListParams{Status: strings.Join(f.Status, ","), Sources: f.Source, Kinds: f.Kind, Limit: f.Limit, Cursor: f.Cursor}
}

func (s *Server) list(ctx context.Context, req *mcp.CallToolRequest, tool string, a threadArgs, p agent.ListParams) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError(tool, err)
	}
	got, err := s.inbox.ListInbox(ctx, k, p)
	if err != nil {
		return nil, nil, s.toolError(tool, err)
	}
	out := page{Notifications: make([]listed, len(got.Notifications)), NextCursor: got.NextCursor}
	for i, r := range got.Notifications {
		out.Notifications[i] = s.listedOf(r)
	}
	return nil, out, nil
}

func (s *Server) listTool(ctx context.Context, req *mcp.CallToolRequest, a listArgs) (*mcp.CallToolResult, any, error) {
	return s.list(ctx, req, "inbox_list", a.threadArgs, a.params())
}

func (s *Server) searchTool(ctx context.Context, req *mcp.CallToolRequest, a searchArgs) (*mcp.CallToolResult, any, error) {
	p := a.params()
	p.Search = a.Query
	if p.Status == "" {
		p.Status = "all" // a search looks for something specific, seen or not
	}
	return s.list(ctx, req, "inbox_search", a.threadArgs, p)
}

func (s *Server) readTool(ctx context.Context, req *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("inbox_read", err)
	}
	got, err := s.inbox.ReadInbox(ctx, k, a.IDs)
	if err != nil {
		return nil, nil, s.toolError("inbox_read", err)
	}
	return nil, map[string]any{"notifications": got}, nil
}

func (s *Server) actTool(tool, action string) mcp.ToolHandlerFor[actArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, a actArgs) (*mcp.CallToolResult, any, error) {
		ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
		defer cancel()
		if err != nil {
			return nil, nil, s.toolError(tool, err)
		}
		rec, err := s.inbox.ActOn(ctx, k, a.ID, action)
		if err != nil {
			return nil, nil, s.toolError(tool, err)
		}
		return nil, s.listedOf(rec), nil
	}
}

func (s *Server) snoozeTool(ctx context.Context, req *mcp.CallToolRequest, a snoozeArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("inbox_snooze", err)
	}
	rec, err := s.inbox.Snooze(ctx, k, a.ID, a.Until)
	if err != nil {
		return nil, nil, s.toolError("inbox_snooze", err)
	}
	return nil, s.listedOf(rec), nil
}

func (s *Server) notifyTool(ctx context.Context, req *mcp.CallToolRequest, a notifyArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("notify", err)
	}
	if a.Notifications != nil {
		if single, _ := json.Marshal(a.notifyBody); string(single) != "{}" {
			return nil, nil, s.toolError("notify", agent.NewError(agent.KindInvalid, "bad_request",
				"give either one notification's fields or notifications, not both"))
		}
		body, err := json.Marshal(a.Notifications)
		if err != nil {
			return nil, nil, s.toolError("notify", fmt.Errorf("encode the notifications: %w", err))
		}
		res, err := s.inbox.CreateNotifications(ctx, k, body, "")
		if err != nil {
			return nil, nil, s.toolError("notify", err)
		}
		return nil, map[string]any{"results": res}, nil
	}
	if a.Summary == "" {
		return nil, nil, s.toolError("notify", agent.NewError(agent.KindInvalid, "bad_request", "summary: required (or notifications)"))
	}
	body, err := json.Marshal(a.notifyBody)
	if err != nil {
		return nil, nil, s.toolError("notify", fmt.Errorf("encode the notification: %w", err))
	}
	res, err := s.inbox.CreateNotification(ctx, k, body, "")
	if err != nil {
		return nil, nil, s.toolError("notify", err)
	}
	return nil, res, nil
}
