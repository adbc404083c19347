package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// Slack is how approvals reach people (connectors/slack's Messenger).
type Slack interface {
	// PostApproval posts a's message with Approve and Decline buttons; threadTS
	// threads it under a message. It returns the message's channel and ts.
	PostApproval(ctx context.Context, connector, channel, threadTS string, a Approval) (string, string, error)
	// UpdateApproval rewrites a's posted message to show its outcome (no buttons).
	UpdateApproval(ctx context.Context, connector string, a Approval) error
	// InGroup reports whether user is a member of the user group.
	InGroup(ctx context.Context, connector, group, user string) (bool, error)
}

// Resumer answers a runtime waiting on people: a suspended Mastra tool call
// (targets/mastra's send-tool-approval), an A2A task's question (targets/a2a).
type Resumer interface {
	SendToolApproval(ctx context.Context, k inbox.ThreadKey, toolCallID string, approved bool) error
	// Answer resumes a call that suspended for an answer with resumeData.
	Answer(ctx context.Context, k inbox.ThreadKey, toolCallID string, resumeData any) error
}

// Emitter sends a gateway-made signal to a thread (agent.Emitter).
type Emitter interface {
	Emit(ctx context.Context, k inbox.ThreadKey, sig agent.Signal) error
}

// WakeSlots tells subscribers of closed wake runs of agents with max_concurrent_wakes.
type WakeSlots interface {
	OnWakeSlotFreed(h func(agentID string))
}

// ErrStale is a Resumer's answer when the run no longer waits on the call.
var ErrStale = errors.New("the run no longer waits for this tool call")

// Deps are what the service works with.
type Deps struct {
	Store   Store
	Places  Places
	Slack   Slack
	Resumer Resumer // may be nil without mastra agents
	Emitter Emitter
	// Relay, when set, brings followed Mastra runs' tool approvals; the Service
	// subscribes to it.
	Relay *Relay
	// Slots, when set, tells of freed wake slots (agent.Runs); the Service subscribes.
	Slots WakeSlots
	// Traces traces posting and deciding approvals (nil: off).
	Traces trace.TracerProvider
	service.Base
	NewID func() string
}

// Service records, posts and decides approvals.
type Service struct {
	cfg Config
	Deps
	// sweepEvery paces the expiry sweep.
	sweepEvery time.Duration

	service.StartStop
	mu     sync.Mutex
	clicks chan<- laterJob // nil unless started
	// freed are the agents a wake slot freed for, sent by slotLoop on slotKick.
	freed    map[string]struct{}
	slotKick chan struct{}
	replies  reply.Decider // nil: no reply outbox; guarded by mu
}

// SweepEvery is how often pending approvals past expire_after are expired.
const SweepEvery = 30 * time.Second

// Timeouts of the calls made while a person or a stream waits.
const (
	slackTimeout  = 5 * time.Second
	resumeTimeout = 10 * time.Second
)

// New builds the service; cfg must be valid and enabled.
func New(cfg Config, deps Deps) *Service {
	if deps.NewID == nil {
		deps.NewID = inbox.NewID
	}
	deps.Base = deps.Base.Component("approvals")
	s := &Service{cfg: cfg.WithDefaults(), Deps: deps, sweepEvery: SweepEvery, freed: map[string]struct{}{},
		slotKick: make(chan struct{}, 1)}
	if deps.Relay != nil {
		deps.Relay.subscribe(s)
	}
	if deps.Slots != nil {
		deps.Slots.OnWakeSlotFreed(s.WakeSlotFreed)
	}
	return s
}

// Request is a new approval as the asker describes it.
type Request struct {
	Thread      inbox.ThreadKey
	Origin      string
	Kind        string // KindApproval when empty
	RunID       string
	ToolCallID  string
	Tool        string
	Arguments   json.RawMessage
	Description string
}

// ErrCallIDTooLong: a tool call or run id longer than MaxCallID bytes. Ids are kept
// whole or refused: a cut id would find another call's approval.
var ErrCallIDTooLong = fmt.Errorf("tool call and run ids are at most %d bytes", MaxCallID)

// Request records an approval and posts it to Slack. A second request for the same
// call of the same thread (a replayed stream, a resent request) returns the first
// one and posts nothing; one for another tool or other arguments under the same call
// id is agent.ErrApprovalConflict. created reports a new approval.
func (s *Service) Request(ctx context.Context, r Request) (Approval, bool, error) {
	if len(r.ToolCallID) > MaxCallID || len(r.RunID) > MaxCallID {
		return Approval{}, false, ErrCallIDTooLong
	}
	now := s.Now().UTC()
	args, cut := BoundArguments(r.Arguments)
	if r.Kind == "" {
		r.Kind = KindApproval
	}
	a := Approval{ID: s.NewID(), ThreadKey: r.Thread, Origin: r.Origin, Kind: r.Kind, RunID: r.RunID,
		ToolCallID: r.ToolCallID, Tool: truncate(r.Tool, MaxTool), Arguments: args, Truncated: cut,
		Description: truncate(r.Description, MaxDescription), Status: StatusPending, Connector: s.cfg.SlackConnector,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.ExpireAfter), UpdatedAt: now}
	if a.ToolCallID == "" {
		a.ToolCallID = a.ID
	}
	got, created, err := s.Store.CreateApproval(ctx, a)
	if err != nil {
		return Approval{}, false, fmt.Errorf("record approval: %w", err)
	}
	if !created {
		if got.Kind == KindQuestion || a.Kind == KindQuestion {
			// Mastra's list of suspended runs shows a question's payload differently from
			// the stream: the call's first record stands, whatever it showed.
			return got, false, nil
		}
		// Compared as stored (the store keeps text clean).
		sent := json.RawMessage(inbox.CleanText(string(a.Arguments)))
		if got.Tool != a.Tool || got.Truncated != a.Truncated || !agent.SameArguments(got.Arguments, sent) {
			return Approval{}, false, fmt.Errorf("approval for call %q: %w", a.ToolCallID, agent.ErrApprovalConflict)
		}
		return got, false, nil
	}
	ctx, span := s.startSpan(ctx, "approval request", got.ID)
	s.post(ctx, &got)
	traceApproval(ctx, got)
	endSpan(span, nil)
	return got, true, nil
}

// post sends a's message to the configured channel, or to the DM or thread the
// thread's last Slack message came from, and records where it went or why not.
func (s *Service) post(ctx context.Context, a *Approval) {
	ctx, cancel := context.WithTimeout(ctx, slackTimeout)
	defer cancel()
	channel, threadTS := s.cfg.Channel, ""
	var postErr string
	if channel == "" {
		p, ok, err := s.Places.LastSlackMessage(ctx, a.ThreadKey, s.cfg.SlackConnector)
		switch {
		case err != nil:
			postErr = "find the thread's Slack conversation: " + err.Error()
		case !ok:
			postErr = "no approvals.channel is set and no Slack message reached this thread through connector " + s.cfg.SlackConnector
		default:
			channel = p.Channel
			// In a channel the approval answers in the message's thread; a DM is its own place.
			if threadTS = p.ThreadTS; threadTS == "" && p.ChannelType != "im" {
				threadTS = p.TS
			}
		}
	}
	var ts string
	if postErr == "" {
		var err error
		if channel, ts, err = s.Slack.PostApproval(ctx, s.cfg.SlackConnector, channel, threadTS, *a); err != nil {
			postErr = "post to Slack: " + err.Error()
		}
	}
	if postErr != "" {
		s.Logger.WarnContext(ctx, "approval not posted", "approval_id", a.ID, "thread", a.ThreadKey.String(), "error", postErr)
		channel, threadTS = "", ""
	}
	a.Connector, a.Channel, a.MessageTS, a.ThreadTS, a.PostError = s.cfg.SlackConnector, channel, ts, threadTS, postErr
	if err := s.Store.SetApprovalMessage(context.WithoutCancel(ctx), a.ID, a.Connector, channel, ts, threadTS, postErr, s.Now().UTC()); err != nil {
		s.Logger.ErrorContext(ctx, "record approval message", "approval_id", a.ID, "error", err.Error())
	}
}

// Click is a person's answer from Slack.
type Click struct {
	Connector  string
	ApprovalID string
	Approve    bool
	UserID     string
	UserName   string
	// Channel and MessageTS are the clicked message's: it is the one to update even
	// when the click comes before the post's position was recorded.
	Channel, MessageTS string
}

// clicked fills in where a's message is from the click when it is not recorded yet.
func (c Click) clicked(a Approval) Approval {
	if a.MessageTS == "" && c.MessageTS != "" {
		a.Channel, a.MessageTS = c.Channel, c.MessageTS
	}
	return a
}

// Decide applies a click. It returns what to tell the person privately, as Slack mrkdwn
// text ("" when the updated message says it all). Only approvers decide; a decided, expired or unknown
// approval changes nothing.
func (s *Service) Decide(ctx context.Context, c Click) (string, error) {
	ctx, span := s.startSpan(ctx, "approval decide", c.ApprovalID)
	answer, err := s.decide(ctx, c)
	endSpan(span, err)
	return answer, err
}

func (s *Service) decide(ctx context.Context, c Click) (string, error) {
	a, err := s.Store.GetApproval(ctx, c.ApprovalID)
	if errors.Is(err, ErrNotFound) {
		return "This approval is no longer known to signalgate; nothing was changed.", nil
	}
	if err != nil {
		return "", fmt.Errorf("read approval: %w", err)
	}
	a = c.clicked(a)
	if c.Connector != a.Connector {
		return "This approval belongs to another Slack app; nothing was changed.", nil
	}
	if a.Kind == KindQuestion {
		// A question has no buttons: a click naming one is forged, and would resume the
		// run without the answer it waits for.
		return "This is a question: reply in its thread to answer; nothing was changed.", nil
	}
	ok, err := s.approver(ctx, c.UserID)
	if err != nil {
		return "", fmt.Errorf("check approver: %w", err)
	}
	if !ok {
		s.Logger.InfoContext(ctx, "approval click refused: not an approver", "approval_id", a.ID, "user", c.UserID)
		return "Sorry, you are not one of the approvers for this agent's tool calls, so your click changed nothing.", nil
	}
	now := s.Now().UTC()
	if a.Status == StatusPending && !now.Before(a.ExpiresAt) {
		s.expire(ctx, []Approval{a}, "it expired")
		return "This approval expired before anyone decided; nothing was changed.", nil
	}
	if a.Status != StatusPending {
		return already(a), nil
	}
	status := StatusDeclined
	if c.Approve {
		status = StatusApproved
	}
	decided, changed, err := s.Store.DecideApproval(ctx, a.ID, status, c.UserID, c.UserName, now)
	if err != nil {
		return "", fmt.Errorf("record decision: %w", err)
	}
	if !changed {
		return already(decided), nil
	}
	decided = c.clicked(decided)
	traceApproval(ctx, decided)
	if err := s.deliver(ctx, decided); errors.Is(err, agent.ErrWakeQueued) {
		// The decision stands: its signal waits for a wake slot, sent by Redeliver.
		s.Logger.InfoContext(ctx, "approval decided; its signal waits for a wake slot", "approval_id", a.ID, "status", string(status),
			"user", c.UserID)
		s.update(ctx, decided)
		return "", nil
	} else if err != nil {
		// Not delivered: the decision is undone whatever ctx does, so the approval is pending
		// again (a later click can try again) or, when the run no longer waits, expires.
		ctx := context.WithoutCancel(ctx)
		reopened, rerr := s.Store.ReopenApproval(ctx, a.ID, status, now)
		if rerr != nil {
			s.Logger.ErrorContext(ctx, "reopen approval", "approval_id", a.ID, "error", rerr.Error())
		}
		if errors.Is(err, ErrStale) {
			s.Logger.InfoContext(ctx, "approval stale: the run no longer waits", "approval_id", a.ID, "error", err.Error())
			if reopened {
				s.expire(ctx, []Approval{a}, "the run no longer waits")
			}
			return "The agent's run no longer waits for this tool call, so the approval has expired; nothing was changed.", nil
		}
		s.Logger.WarnContext(ctx, "approval decision not delivered", "approval_id", a.ID, "error", err.Error())
		return "The decision could not reach the agent just now; the approval is still pending, please try again.", nil
	}
	s.Logger.InfoContext(ctx, "approval decided", "approval_id", a.ID, "status", string(status), "user", c.UserID)
	s.update(ctx, decided)
	return "", nil
}

// already is the polite answer to a click on a decided or expired approval.
func already(a Approval) string {
	switch a.Status {
	case StatusExpired:
		return "This approval has expired; nothing was changed."
	case StatusPending:
		return "This approval is being decided right now; nothing was changed."
	}
	when := ""
	if a.DecidedAt != nil {
		when = " at " + a.DecidedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return fmt.Sprintf("This was already %s by %s%s; nothing was changed.", a.Status, mrkdwn(a.Decider()), when)
}

// mrkdwn makes s plain text in a Slack message, escaping the three characters Slack's
// mrkdwn wants escaped: a display name chosen by its owner mentions nobody and links
// nowhere.
func mrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// approver reports whether a Slack user may decide: listed, or in a listed group.
func (s *Service) approver(ctx context.Context, user string) (bool, error) {
	if user == "" {
		return false, nil
	}
	if slices.Contains(s.cfg.Approvers, user) {
		return true, nil
	}
	var errs []error
	for _, a := range s.cfg.Approvers {
		if !strings.HasPrefix(a, "S") {
			continue
		}
		in, err := s.Slack.InGroup(ctx, s.cfg.SlackConnector, a, user)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if in {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

// deliver hands a decision to whoever asked: the runtime that suspended the call
// (Mastra's send-tool-approval, a hosted session's events), or the thread as an
// <approval> signal.
func (s *Service) deliver(ctx context.Context, a Approval) error {
	ctx, cancel := context.WithTimeout(ctx, resumeTimeout)
	defer cancel()
	switch a.Origin {
	case OriginReply:
		return s.decideReply(ctx, a)
	case OriginMastra, OriginOpenAIAgents, OriginClaudeAgents:
		if s.Resumer == nil {
			return errors.New("no runtime client for approvals")
		}
		return s.Resumer.SendToolApproval(ctx, a.ThreadKey, a.ToolCallID, a.Status == StatusApproved)
	default:
		return s.Emitter.Emit(ctx, a.ThreadKey, Signal(a))
	}
}

// TagApproval is the tag of a decision signal.
const TagApproval = "approval"

// Signal is the decision as the thread receives it:
// <approval tool="deploy" decision="approved" by="Jane">description</approval>; the
// approval and call ids ride in its metadata.
func Signal(a Approval) agent.Signal {
	attrs := inbox.Attributes{}.Set("tool", a.Tool).Set("decision", string(a.Status))
	if by := a.Decider(); by != "" {
		attrs = attrs.Set("by", by)
	}
	contents := a.Description
	if contents == "" {
		contents = a.Tool
	}
	meta := map[string]any{"approval": map[string]any{"id": a.ID, "toolCallId": a.ToolCallID, "tool": a.Tool,
		"decision": string(a.Status), "decidedBy": a.DecidedBy}}
	// Created when decided: a decision waiting for a wake slot keeps its place.
	created := a.UpdatedAt
	if a.DecidedAt != nil {
		created = *a.DecidedAt
	}
	return agent.Signal{ID: SignalPrefix + a.ID, Type: agent.TypeReactive, TagName: TagApproval,
		Contents: contents, Attributes: attrs, Metadata: meta, CreatedAt: created}
}

// SignalPrefix starts the id of an approval's signal; the approval id follows.
const SignalPrefix = "approval-"

// update rewrites the Slack message of a to its outcome.
func (s *Service) update(ctx context.Context, a Approval) {
	if a.MessageTS == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), slackTimeout)
	defer cancel()
	if err := s.Slack.UpdateApproval(ctx, a.Connector, a); err != nil {
		s.Logger.Warn("update approval message", "approval_id", a.ID, "error", err.Error())
	}
}

// expire marks approvals expired (when still pending), updates their messages, and
// tells API askers.
func (s *Service) expire(ctx context.Context, as []Approval, why string) {
	now := s.Now().UTC()
	for _, a := range as {
		if a.Status == StatusPending {
			got, changed, err := s.Store.DecideApproval(ctx, a.ID, StatusExpired, "", "", now)
			if err != nil {
				s.Logger.Error("expire approval", "approval_id", a.ID, "error", err.Error())
				continue
			}
			if !changed {
				continue
			}
			a = got
		}
		s.expired(ctx, a, why)
	}
}

// expired tells Slack and an API asker that a is expired.
func (s *Service) expired(ctx context.Context, a Approval, why string) {
	s.Logger.Info("approval expired", "approval_id", a.ID, "reason", why)
	s.update(ctx, a)
	if a.Origin == OriginReply {
		s.expireReply(ctx, a, why)
	}
	if a.Origin == OriginAPI {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resumeTimeout)
		defer cancel()
		if err := s.Emitter.Emit(ctx, a.ThreadKey, Signal(a)); errors.Is(err, agent.ErrWakeQueued) {
			s.Logger.Info("approval expired; its signal waits for a wake slot", "approval_id", a.ID)
		} else if err != nil {
			s.Logger.Warn("tell the thread an approval expired", "approval_id", a.ID, "error", err.Error())
		}
	}
}

// truncate cuts s to at most n bytes on a rune boundary, cleaned for storage.
func truncate(s string, n int) string {
	s = inbox.CleanText(strings.TrimSpace(s))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
