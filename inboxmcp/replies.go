package inboxmcp

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// Replies is the reply outbox (reply.Service), as the agent API serves it.
type Replies interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
	Get(ctx context.Context, k inbox.ThreadKey, id string) (reply.Reply, error)
}

// WithReplies offers the tools reply and reply_status over r; without it (no connector
// sends replies) they are not offered at all, so a model is never shown a tool that
// cannot work.
func WithReplies(r Replies) Option { return func(s *Server) { s.replies = r } }

type replyArgs struct {
	threadArgs
	ID      string    `json:"id" jsonschema:"Your id for this reply, unique across the gateway: 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit. Calling again with the same id and text is safe: it answers the reply as it is now."`
	Text    string    `json:"text" jsonschema:"The answer, in Markdown (converted for Slack; GitHub renders it; email sends it as plain text)."`
	ReplyTo *reply.To `json:"replyTo,omitempty" jsonschema:"Where to answer: the replyTo of one of this thread's notifications (inbox_list shows it). Omit to answer where the thread's most recent notification came from."`
	Watch   bool      `json:"watch,omitempty" jsonschema:"Hear further messages of that conversation (Slack thread, issue, email thread) on this thread. Refused, as the watch tool would refuse it, where you may not watch that conversation."`
	// Approval asks an approver before sending, whatever the agent's configuration.
	Approval bool `json:"approval,omitempty" jsonschema:"Have a person approve the text before it is sent (the reply waits as pending). Refused where the gateway has no approvers."`
}

type replyStatusArgs struct {
	threadArgs
	ID string `json:"id" jsonschema:"The reply's id, as given to reply."`
}

func (s *Server) addReplyTools() {
	if s.replies == nil {
		return
	}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "reply",
		// Posting to a person is not undone, but the same id again posts nothing more.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(true)},
		InputSchema: schema[replyArgs](func(p map[string]*jsonschema.Schema) {
			p["id"].MinLength, p["id"].MaxLength, p["id"].Pattern = ptr(1), ptr(128), `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`
			p["text"].MinLength = ptr(1)
			if err := s.replyToSchema(p["replyTo"]); err != nil {
				panic(fmt.Sprintf("inboxmcp: %v", err)) // the kinds table's fault, caught by its test
			}
		}),
		Description: "Answer where a notification of this thread came from: the Slack DM or thread, the GitHub issue, pull request or review thread, or the email. " +
			"The gateway sends it exactly once, retrying if the platform is down, so the call returns at once with status queued (or pending when a person must approve it first); " +
			"use reply_status to see it sent (with the platform's link) or failed (with the reason). " +
			"Give each answer a fresh id; the same id and text again is a safe retry."},
		s.replyTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "reply_status",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		InputSchema: schema[replyStatusArgs](idRequired),
		Description: "Show one of this thread's replies: queued (waiting or retrying), pending (waiting for approval), sent (platformId and url say where), failed (lastError says why) or declined."},
		s.replyStatusTool)
}

func (s *Server) replyTool(ctx context.Context, req *mcp.CallToolRequest, a replyArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("reply", err)
	}
	r, err := s.replies.Queue(ctx, k, reply.Request{ID: a.ID, Text: a.Text, ReplyTo: a.ReplyTo, Watch: a.Watch, Approval: a.Approval})
	if err != nil {
		return nil, nil, s.replyError("reply", err)
	}
	return nil, r, nil
}

func (s *Server) replyStatusTool(ctx context.Context, req *mcp.CallToolRequest, a replyStatusArgs) (*mcp.CallToolResult, any, error) {
	ctx, cancel, k, err := s.thread(ctx, req, a.threadArgs)
	defer cancel()
	if err != nil {
		return nil, nil, s.toolError("reply_status", err)
	}
	r, err := s.replies.Get(ctx, k, a.ID)
	if err != nil {
		return nil, nil, s.replyError("reply_status", err)
	}
	return nil, r, nil
}

// replyError answers the outbox's refusals with the agent API's codes and messages.
func (s *Server) replyError(tool string, err error) error {
	code, ok := reply.Code(err)
	if !ok {
		return s.toolError(tool, err)
	}
	if code == "not_found" {
		return fmt.Errorf("%s: %s", code, reply.NotFoundMessage)
	}
	return fmt.Errorf("%s: %s", code, err.Error())
}

// replyToOf is the replyTo a record's metadata carries (nil: none), as its kind writes
// it.
func (s *Server) replyToOf(r inbox.Record) *reply.To {
	if to, ok := reply.FromMetadata(r.Metadata); ok {
		to = s.places.Normal(to)
		return &to
	}
	return nil
}

// replyToSchema is the reply tool's replyTo: source and connector (sc has them, from
// reply.To) and the fields of every kind's places (none may be another's); no other
// field.
func (s *Server) replyToSchema(sc *jsonschema.Schema) error {
	if _, err := s.places.Fields(); err != nil {
		return err
	}
	for _, p := range s.places {
		ps, err := jsonschema.ForType(p.Codec.Type(), nil)
		if err != nil {
			return fmt.Errorf("schema of the %s places: %w", p.Source, err)
		}
		for name, f := range ps.Properties {
			if _, ok := sc.Properties[name]; !ok {
				sc.Properties[name] = f
			}
		}
	}
	return nil
}
