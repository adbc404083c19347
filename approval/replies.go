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

// OnReplyDecided subscribes d to approvers' decisions on reply drafts: the outbox, built
// after this service (which it asks to post its drafts), subscribes when it is built.
func (s *Service) OnReplyDecided(d reply.Decider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = d
}

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
	s.mu.Lock()
	d := s.replies
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	_, err := d.Decided(ctx, strings.TrimPrefix(a.ToolCallID, replyCall), a.Status == StatusApproved, a.Decider())
	return err
}

// expireReply tells the outbox that nobody decided on a reply draft: it ends declined
// with why, never sent.
func (s *Service) expireReply(ctx context.Context, a Approval, why string) {
	s.mu.Lock()
	d := s.replies
	s.mu.Unlock()
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resumeTimeout)
	defer cancel()
	if _, err := d.Expired(ctx, strings.TrimPrefix(a.ToolCallID, replyCall), "the approval expired ("+why+")"); err != nil {
		s.Logger.Error("end a reply whose approval expired", "approval_id", a.ID, "error", err.Error())
	}
}
