package approval

import (
	"context"
	"strings"

	"github.com/signalgate/signalgate/reply"
)

// OriginReply is a reply draft held for an approver (agents[].replies.approval).
const OriginReply = "reply"

// replyCall prefixes a reply's id into its approval's call id.
const replyCall = "reply:"

// ReplyDecider is told an approver's decision on a reply draft (reply.Service).
type ReplyDecider interface {
	Decided(ctx context.Context, id string, approved bool, by string) (bool, error)
}

// SetReplies names where decisions on reply drafts go; set before Start (the outbox is
// built after this service, which it asks to post its drafts).
func (s *Service) SetReplies(d ReplyDecider) { s.replies = d }

// RequestReplyApproval posts r's draft to the approvers like a tool approval (tool
// "reply", the text as description, cut at MaxDescription).
func (s *Service) RequestReplyApproval(ctx context.Context, r reply.Reply) error {
	_, _, err := s.Request(ctx, Request{Thread: r.Thread, Origin: OriginReply, ToolCallID: replyCall + r.ID,
		Tool: "reply", Description: r.Text})
	return err
}

// decideReply hands a decision on a reply draft to the outbox: approved queues it,
// declined ends it.
func (s *Service) decideReply(ctx context.Context, a Approval) error {
	if s.replies == nil {
		return nil
	}
	_, err := s.replies.Decided(ctx, strings.TrimPrefix(a.ToolCallID, replyCall), a.Status == StatusApproved, a.Decider())
	return err
}
