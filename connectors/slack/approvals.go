package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
)

// Action ids of the approval buttons; the button's value is the approval id.
const (
	ActionApprove   = "signalgate_approve"
	ActionDecline   = "signalgate_decline"
	approvalBlockID = "signalgate_approval"
	// A section holds at most 3000 characters, counted after escaping: the parts' shares.
	maxShownName        = 400
	maxShownDescription = 1000
	maxShownArgs        = 1400
	maxGroupMembers     = 10000
	maxCachedGroups     = 64
	approvalTimeFmt     = "2006-01-02 15:04 UTC"
	approvalFallback    = "%s asks to run %s: approve or decline in Slack"
)

// ApprovalScopes are the bot scopes approvals need: chat:write to post and update the
// message and answer privately, usergroups:read to check group approvers.
func ApprovalScopes() []string { return []string{"chat:write", "usergroups:read"} }

// Messenger posts approval messages with a connector's bot token and checks user
// group membership (approval.Slack).
type Messenger struct {
	apis map[string]*slack.Client // connector name → bot token client, nil without a token
	ttl  time.Duration
	now  func() time.Time

	mu     sync.Mutex
	groups map[string]groupEntry // connector + "/" + group; at most maxCachedGroups
}

type groupEntry struct {
	members map[string]bool
	until   time.Time
}

var _ approval.Slack = (*Messenger)(nil)

// NewMessenger builds the approvals' view of the connectors, with its own Web API
// clients: it is built before the Handler, whose approval clicks go to the service that
// posts through it. Group memberships are trusted for ttl.
func NewMessenger(cfgs []Config, ttl time.Duration, log *slog.Logger, now func() time.Time) *Messenger {
	m := &Messenger{apis: map[string]*slack.Client{}, ttl: ttl, now: now, groups: map[string]groupEntry{}}
	hc := &http.Client{Timeout: webAPITimeout}
	for _, c := range cfgs {
		c = c.WithDefaults()
		m.apis[c.Name] = botClient(&c, hc, log.With("component", "connector_slack", "connector", c.Name))
	}
	return m
}

func (m *Messenger) api(connector string) (*slack.Client, error) {
	api, ok := m.apis[connector]
	switch {
	case !ok:
		return nil, fmt.Errorf("no slack connector named %q", connector)
	case api == nil:
		return nil, fmt.Errorf("slack connector %q has no bot_token", connector)
	}
	return api, nil
}

// PostApproval posts a's message with Approve and Decline buttons.
func (m *Messenger) PostApproval(ctx context.Context, connector, channel, threadTS string, a approval.Approval) (string, string, error) {
	api, err := m.api(connector)
	if err != nil {
		return "", "", err
	}
	// The text is what notifications and previews show: escaped like the blocks.
	text := fmt.Sprintf(approvalFallback, escapeCut(a.Agent, maxShownName/2), escapeCut(a.Tool, maxShownName/2))
	blocks := approvalBlocks(a, true)
	if a.Kind == approval.KindQuestion {
		text = fmt.Sprintf(questionFallback, escapeCut(a.Agent, maxShownName/2), escapeCut(a.Description, maxShownDescription))
		blocks = questionBlocks(a)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	ch, ts, err := api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", "", fmt.Errorf("chat.postMessage: %w", err)
	}
	return ch, ts, nil
}

// UpdateApproval rewrites the posted message to show a's outcome, without buttons.
func (m *Messenger) UpdateApproval(ctx context.Context, connector string, a approval.Approval) error {
	api, err := m.api(connector)
	if err != nil {
		return err
	}
	text, blocks := outcome(a), approvalBlocks(a, false)
	if a.Kind == approval.KindQuestion {
		text, blocks = questionOutcome(a), questionBlocks(a)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, a.Channel, a.MessageTS,
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
		return fmt.Errorf("chat.update: %w", err)
	}
	return nil
}

// ephemeral answers one person privately in channel (threaded under threadTS).
func (h *Handler) ephemeral(ctx context.Context, connector, channel, user, threadTS, text string) error {
	c, ok := h.conns[connector]
	if !ok {
		return fmt.Errorf("no slack connector named %q", connector)
	}
	return c.ephemeral(ctx, channel, user, threadTS, text)
}

// ephemeral answers one person privately with the connector's bot token.
func (c *connector) ephemeral(ctx context.Context, channel, user, threadTS, text string) error {
	api := c.resolver.api
	if api == nil {
		return fmt.Errorf("slack connector %q has no bot_token", c.cfg.Name)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	if _, err := api.PostEphemeralContext(ctx, channel, user, opts...); err != nil {
		return fmt.Errorf("chat.postEphemeral: %w", err)
	}
	return nil
}

// InGroup reports whether user is in the user group, from a membership list cached
// for the messenger's ttl (usergroups.users.list).
func (m *Messenger) InGroup(ctx context.Context, connector, group, user string) (bool, error) {
	key := connector + "/" + group
	now := m.now()
	m.mu.Lock()
	e, ok := m.groups[key]
	m.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.members[user], nil
	}
	api, err := m.api(connector)
	if err != nil {
		return false, err
	}
	ids, err := api.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		return false, fmt.Errorf("usergroups.users.list %s: %w", group, err)
	}
	e = groupEntry{members: make(map[string]bool, min(len(ids), maxGroupMembers)), until: now.Add(m.ttl)}
	for _, id := range ids[:min(len(ids), maxGroupMembers)] {
		e.members[id] = true
	}
	m.mu.Lock()
	if _, present := m.groups[key]; !present && len(m.groups) >= maxCachedGroups {
		for k := range m.groups { // groups come from config: this only guards a misuse
			delete(m.groups, k)
			break
		}
	}
	m.groups[key] = e
	m.mu.Unlock()
	return e.members[user], nil
}

// approvalBlocks is the Block Kit message of a: what the agent wants to do, then the
// buttons while pending, or who decided and when.
func approvalBlocks(a approval.Approval, buttons bool) []slack.Block {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* wants to run *%s*", escapeCut(a.Agent, maxShownName/2), escapeCut(a.Tool, maxShownName/2))
	if a.Description != "" {
		fmt.Fprintf(&b, "\n%s", escapeCut(a.Description, maxShownDescription))
	}
	if len(a.Arguments) > 0 {
		fmt.Fprintf(&b, "\n```%s```", escapeCut(strings.ReplaceAll(string(a.Arguments), "```", "'''"), maxShownArgs))
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(mrkdwn(b.String()), nil, nil),
		slack.NewContextBlock("", mrkdwn(escape(fmt.Sprintf("thread %s / %s · approval %s", a.Resource, a.Thread, a.ID)))),
	}
	if buttons {
		approve := slack.NewButtonBlockElement(ActionApprove, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
		approve.Style = slack.StylePrimary
		decline := slack.NewButtonBlockElement(ActionDecline, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Decline", false, false))
		decline.Style = slack.StyleDanger
		return append(blocks, slack.NewActionBlock(approvalBlockID, approve, decline))
	}
	return append(blocks, slack.NewSectionBlock(mrkdwn(outcome(a)), nil, nil))
}

// mrkdwn is a verbatim mrkdwn text: Slack turns no bare URL, channel name or @name of
// the asker's text into a link or mention (only the escaped markup written here counts).
func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}

// outcome says how a ended: "Approved by <@U1> (Jane) at …".
func outcome(a approval.Approval) string {
	switch a.Status {
	case approval.StatusApproved, approval.StatusDeclined:
		who := "<@" + a.DecidedBy + ">"
		if a.DecidedByName != "" {
			who += " (" + escape(a.DecidedByName) + ")"
		}
		when := ""
		if a.DecidedAt != nil {
			when = " at " + a.DecidedAt.UTC().Format(approvalTimeFmt)
		}
		verb := "Approved"
		if a.Status == approval.StatusDeclined {
			verb = "Declined"
		}
		return fmt.Sprintf("%s by %s%s", verb, who, when)
	case approval.StatusExpired:
		return "Expired: nobody decided, or the run stopped waiting"
	}
	return "Waiting for a decision"
}

// escape makes text safe in mrkdwn: no mentions or links slip in from arguments.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// escapeCut escapes s and cuts the result to at most n characters, never inside an
// entity (escaping can make a text five times longer).
func escapeCut(s string, n int) string {
	e := escape(s)
	if utf8.RuneCountInString(e) <= n {
		return e
	}
	e = strings.TrimSuffix(connectors.Truncate(e, n), "…")
	if amp := strings.LastIndexByte(e, '&'); amp >= 0 && !strings.Contains(e[amp:], ";") {
		e = e[:amp]
	}
	return e + "…"
}

// Decider applies a click on an approval button and a threaded reply that may answer a
// question (approval.Service).
type Decider interface {
	Decide(ctx context.Context, c approval.Click) (string, error)
	// Later decides c after the request is answered and hands the notice to answer; false
	// when it cannot take c now (then Decide runs within the request).
	Later(c approval.Click, answer func(ctx context.Context, notice string)) bool
	// Answer applies a threaded reply; LaterAnswer is its Later.
	Answer(ctx context.Context, r approval.Reply) (string, error)
	LaterAnswer(r approval.Reply, answer func(ctx context.Context, notice string)) bool
}

// errNoDecider: interactions arrive but approvals are not configured.
var errNoDecider = errors.New("approvals are not configured")

// isApprovalAction reports one of the approval buttons.
func isApprovalAction(id string) bool {
	return slices.Contains([]string{ActionApprove, ActionDecline}, id)
}
