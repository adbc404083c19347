// Package approval lets people approve or decline an agent's tool call from Slack: a
// Mastra run suspended on a tool that needs approval, or a `stream`/`webhook` agent
// asking through the agent API. An approval is recorded, posted to Slack with Approve
// and Decline buttons, and decided once by an authorized approver; the decision goes
// back to Mastra (send-tool-approval) or to the thread as an `<approval>` signal.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Status is an approval's state; only pending changes, and only once.
type Status string

// Statuses.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDeclined Status = "declined"
	// StatusExpired: nobody decided within approvals.expire_after, or the run stopped
	// waiting (it ended, or the call was answered elsewhere).
	StatusExpired Status = "expired"
	// StatusAnswered: a question (KindQuestion) was answered by an approver's reply.
	StatusAnswered Status = "answered"
)

// Valid reports a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusApproved, StatusDeclined, StatusExpired, StatusAnswered:
		return true
	}
	return false
}

// Origins: who asked. A runtime that asks people questions (Question) is named by its
// target kind.
const (
	OriginMastra = "mastra" // a Mastra run suspended on tool-call-approval
	OriginAPI    = "api"    // POST …/approvals on the agent API
	// OriginLangGraph: a LangGraph thread interrupted by interrupt() (a question; the
	// call id is the interrupt's id).
	OriginLangGraph = "langgraph"
	// OriginA2A: an A2A task in input-required or auth-required (a question; the run id
	// is the task's id, the call id names the task and the state it asked in).
	OriginA2A = "a2a"
	// OriginOpenAIAgents and OriginClaudeAgents: a hosted agent session that requires an
	// action (an approval; the call id is the session's request, call or tool use id).
	OriginOpenAIAgents = "openai-agents"
	OriginClaudeAgents = "claude-agents"
)

// Kinds: what the call waits for.
const (
	KindApproval = "approval" // a decision, from the Approve and Decline buttons
	// KindQuestion: a Mastra tool that suspended for an answer (ask_user), or another
	// runtime waiting for people (an A2A task in input-required); the first threaded reply
	// of an approver answers it, its text resuming the run (Resumer.Answer).
	KindQuestion = "question"
)

// Bounds on what an approval stores and shows: the arguments are a stranger-sized
// value (a model wrote them), kept whole up to MaxArguments bytes and cut beyond. Ids
// (call, run) are never cut: one past MaxCallID bytes is refused (ErrCallIDTooLong).
const (
	MaxArguments   = 8 << 10
	MaxDescription = 2000
	MaxTool        = 200
	MaxCallID      = 200
	// MaxAnswer bounds a reply's text kept and sent as a question's answer.
	MaxAnswer = 4000
)

// Approval is one request for a decision.
type Approval struct {
	ID string `json:"id"`
	inbox.ThreadKey
	Origin string `json:"origin"`
	// Kind is KindApproval or KindQuestion.
	Kind string `json:"kind"`
	// RunID is the runtime's run (Mastra's run id, an A2A task id); ToolCallID the call it
	// waits on (an agent-chosen or generated id for origin api). Unique per thread.
	RunID      string `json:"runId,omitempty"`
	ToolCallID string `json:"toolCallId"`
	Tool       string `json:"tool"`
	// Arguments is the call's JSON arguments, at most MaxArguments bytes; Truncated
	// says they were cut (then Arguments is a JSON string of the cut text).
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Truncated   bool            `json:"argumentsTruncated,omitempty"`
	Description string          `json:"description,omitempty"`
	Status      Status          `json:"status"`
	// Answer is the reply that answered a question (status answered).
	Answer string `json:"answer,omitempty"`
	// Where the Slack message is (empty until posted); PostError says why it is not.
	Connector string `json:"connector,omitempty"`
	Channel   string `json:"channel,omitempty"`
	MessageTS string `json:"messageTs,omitempty"`
	ThreadTS  string `json:"threadTs,omitempty"`
	PostError string `json:"postError,omitempty"`
	// DecidedBy is the Slack user id, DecidedByName their name when known.
	DecidedBy     string     `json:"decidedBy,omitempty"`
	DecidedByName string     `json:"decidedByName,omitempty"`
	DecidedAt     *time.Time `json:"decidedAt,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	ExpiresAt     time.Time  `json:"expiresAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

// Decider names who decided, for messages and signals: the name, else the user id.
func (a Approval) Decider() string {
	if a.DecidedByName != "" {
		return a.DecidedByName
	}
	return a.DecidedBy
}

// Filter selects approvals, newest first. Zero fields match all.
type Filter struct {
	Agent    string
	Resource string
	Thread   string
	Tool     string
	Status   []Status
	Limit    int
	Cursor   string
}

// ErrNotFound: no approval with that id.
var ErrNotFound = inbox.ErrNotFound

// Store keeps approvals (the store package).
type Store interface {
	// CreateApproval inserts a, unless the thread already has one for a.ToolCallID:
	// then it returns that one and false.
	CreateApproval(ctx context.Context, a Approval) (Approval, bool, error)
	GetApproval(ctx context.Context, id string) (Approval, error)
	// SetApprovalMessage records where the Slack message went, or why it did not.
	SetApprovalMessage(ctx context.Context, id, connector, channel, ts, threadTS, postErr string, now time.Time) error
	// DecideApproval moves a pending approval to status; false when it was not pending.
	DecideApproval(ctx context.Context, id string, status Status, by, byName string, now time.Time) (Approval, bool, error)
	// AnswerApproval moves a pending question to answered with the reply's text; false
	// when it was not a pending question.
	AnswerApproval(ctx context.Context, id, answer, by, byName string, now time.Time) (Approval, bool, error)
	// QuestionsInThread lists connector's questions posted in channel as the message
	// threadTS or as replies in its thread, oldest first, at most limit.
	QuestionsInThread(ctx context.Context, connector, channel, threadTS string, limit int) ([]Approval, error)
	// ReopenApproval puts a decided approval back to pending (its decision could not be
	// delivered); false when it was not in status from.
	ReopenApproval(ctx context.Context, id string, from Status, now time.Time) (bool, error)
	// ExpireApprovals expires pending approvals whose expires_at has passed, at most
	// limit, and returns them.
	ExpireApprovals(ctx context.Context, now time.Time, limit int) ([]Approval, error)
	// ExpireRunApprovals expires the pending approvals of k (of Mastra run runID when
	// not empty; of call toolCallID when not empty) and returns them.
	ExpireRunApprovals(ctx context.Context, k inbox.ThreadKey, runID, toolCallID string, now time.Time) ([]Approval, error)
	ListApprovals(ctx context.Context, f Filter) ([]Approval, string, error)
	// UndeliveredApprovals lists origin-api approvals created since createdSince,
	// decided or expired between decidedSince and before, whose signal their thread has
	// not logged; oldest change first, at most limit.
	UndeliveredApprovals(ctx context.Context, createdSince, decidedSince, before time.Time, limit int) ([]Approval, error)
	// QueuedApprovals lists the undelivered decisions (made since `since`) of agentID's
	// threads waiting in its wake queue, in the queue's order; at most limit.
	QueuedApprovals(ctx context.Context, agentID string, since time.Time, limit int) ([]Approval, error)
}

// Places says where a thread's Slack conversation is (the store).
type Places interface {
	// LastSlackMessage is the newest Slack message routed to k through connector.
	LastSlackMessage(ctx context.Context, k inbox.ThreadKey, connector string) (SlackPlace, bool, error)
}

// SlackPlace is one Slack message's position.
type SlackPlace struct {
	Channel, ChannelType, TS, ThreadTS string
}

// Config is the `approvals:` section of config.yaml.
type Config struct {
	// SlackConnector names the connectors.slack entry whose bot posts approvals and
	// whose interactivity endpoint receives the clicks. Empty: approvals are off.
	SlackConnector string `yaml:"slack_connector"`
	// Channel is where approval messages go (a channel id, C…); empty: the DM or
	// thread the run's last Slack message came from.
	Channel string `yaml:"channel"`
	// Approvers may decide: Slack user ids (U…, W…) or user group ids (S…).
	Approvers []string `yaml:"approvers"`
	// ExpireAfter: a pending approval nobody decided expires (default 24h).
	ExpireAfter time.Duration `yaml:"expire_after"`
	// GroupCacheTTL is how long a user group's membership is trusted (default 5m).
	GroupCacheTTL time.Duration `yaml:"group_cache_ttl"`
}

// Defaults.
const (
	DefaultExpireAfter   = 24 * time.Hour
	DefaultGroupCacheTTL = 5 * time.Minute
)

// Enabled reports whether approvals are configured.
func (c Config) Enabled() bool { return c.SlackConnector != "" }

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.ExpireAfter == 0 {
		c.ExpireAfter = DefaultExpireAfter
	}
	if c.GroupCacheTTL == 0 {
		c.GroupCacheTTL = DefaultGroupCacheTTL
	}
	return c
}

// Validate reports problems with key paths relative to `approvals`. slackConnectors
// lists the configured Slack connectors with an HTTP endpoint and a bot token.
func (c Config) Validate(slackConnectors map[string]bool) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !c.Enabled() {
		if c.Channel != "" || len(c.Approvers) > 0 {
			add("slack_connector: required when channel or approvers are set")
		}
		return errors.Join(errs...)
	}
	if ok, known := slackConnectors[c.SlackConnector]; !known {
		add("slack_connector: no connectors.slack entry named %q", c.SlackConnector)
	} else if !ok {
		add("slack_connector: connectors.slack %q needs bot_token (to post) and signing_secret (to verify clicks), and no socket_mode (clicks come to the HTTP interactivity URL)", c.SlackConnector)
	}
	if c.Channel != "" && !slackID(c.Channel) {
		add("channel: %q is not a Slack channel id (like C0123ABCD)", c.Channel)
	}
	if len(c.Approvers) == 0 {
		add("approvers: required: Slack user ids (U…) or user group ids (S…) who may decide")
	}
	for i, a := range c.Approvers {
		if !slackID(a) || !strings.ContainsAny(a[:1], "UWS") {
			add("approvers[%d]: %q is not a Slack user id (U…, W…) or user group id (S…)", i, a)
		}
	}
	if c.ExpireAfter < 0 {
		add("expire_after: must not be negative")
	}
	if c.GroupCacheTTL < 0 {
		add("group_cache_ttl: must not be negative")
	}
	return errors.Join(errs...)
}

// slackID reports an upper-case alphanumeric id such as U0123ABCD.
func slackID(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// BoundArguments keeps raw JSON arguments whole up to MaxArguments bytes; longer or
// invalid ones are kept as a JSON string of their first bytes, marked truncated.
func BoundArguments(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	if len(raw) <= MaxArguments && json.Valid(raw) {
		return raw, false
	}
	cut := inbox.CleanText(string(raw[:min(len(raw), MaxArguments-64)]))
	out, _ := json.Marshal(cut)
	return out, true
}
