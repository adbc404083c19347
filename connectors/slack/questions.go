package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
)

// questionFallback is a question's plain text (notifications, previews).
const questionFallback = "%s asks: %s (reply in this thread to answer)"

// maxShownOptions bounds the options of a question listed in its message.
const maxShownOptions = 10

// questionBlocks is the Block Kit message of a question: what the agent asks and its
// options, then how to answer while pending, or who answered what and when. No buttons:
// the answer is a threaded reply.
func questionBlocks(a approval.Approval) []slack.Block {
	var b strings.Builder
	asks := a.Description
	if asks == "" {
		asks = "(no question text)"
	}
	fmt.Fprintf(&b, "*%s* asks: %s", escapeCut(a.Agent, maxShownName/2), escapeCut(asks, maxShownDescription))
	if opts := questionOptions(a.Arguments); len(opts) > 0 {
		fmt.Fprintf(&b, "\nOptions: %s", escapeCut(strings.Join(opts, " · "), maxShownArgs))
	} else if a.Description == "" && len(a.Arguments) > 0 {
		fmt.Fprintf(&b, "\n```%s```", escapeCut(strings.ReplaceAll(string(a.Arguments), "```", "'''"), maxShownArgs))
	}
	return []slack.Block{
		slack.NewSectionBlock(mrkdwn(b.String()), nil, nil),
		slack.NewContextBlock("", mrkdwn(escape(fmt.Sprintf("thread %s / %s · tool %s · question %s",
			a.Resource, a.Thread, connectors.Truncate(a.Tool, maxShownName/2), a.ID)))),
		slack.NewSectionBlock(mrkdwn(questionOutcome(a)), nil, nil),
	}
}

// questionOptions lists the labels of an ask_user payload's options, at most maxShownOptions.
func questionOptions(payload json.RawMessage) []string {
	var p struct {
		Options []struct {
			Label string `json:"label"`
		} `json:"options"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return nil
	}
	var out []string
	for _, o := range p.Options[:min(len(p.Options), maxShownOptions)] {
		if o.Label != "" {
			out = append(out, o.Label)
		}
	}
	return out
}

// questionOutcome says how to answer, or how the question ended.
func questionOutcome(a approval.Approval) string {
	switch a.Status {
	case approval.StatusAnswered:
		who := "<@" + a.DecidedBy + ">"
		if a.DecidedByName != "" {
			who += " (" + escape(a.DecidedByName) + ")"
		}
		when := ""
		if a.DecidedAt != nil {
			when = " at " + a.DecidedAt.UTC().Format(approvalTimeFmt)
		}
		return fmt.Sprintf("Answered by %s%s: %s", who, when, escapeCut(a.Answer, maxShownDescription))
	case approval.StatusExpired:
		return "Expired: nobody answered, or the run stopped waiting"
	}
	return "Reply in this thread to answer (the first reply by an approver is the answer)."
}

// reply is the threaded message of item it, when it may answer a question: a person's
// (not a bot's) message with text, posted in a thread.
func (c *connector) reply(it *connectors.Item) (approval.Reply, bool) {
	if it.Message == nil || it.Fields.ThreadTS == "" || it.Fields.User == "" {
		return approval.Reply{}, false
	}
	if bot, _ := it.Metadata[connectors.MetaAuthorIsBot].(bool); bot {
		return approval.Reply{}, false
	}
	ts, _ := it.Attributes.Get("ts")
	tsText, _ := ts.(string)
	return approval.Reply{Connector: c.cfg.Name, Channel: it.Fields.Channel, ThreadTS: it.Fields.ThreadTS, TS: tsText,
		UserID: it.Fields.User, UserName: it.Message.Name, Text: it.Message.Text}, tsText != ""
}

// answerReplies hands the stored event's threaded replies to the approvals, which take
// the first approver reply to a pending question as its answer. They are applied after
// the request is answered when the approvals can queue them (Slack wants its answer
// within 3 seconds); the person hears privately why a reply did not answer. Routing is
// not affected: the event was ingested like any other.
func (c *connector) answerReplies(ctx context.Context, items []connectors.Item) {
	if c.answers == nil {
		return
	}
	for i := range items {
		r, ok := c.reply(&items[i])
		if !ok {
			continue
		}
		tell := func(ctx context.Context, notice string) {
			ctx, cancel := context.WithTimeout(ctx, answerTimeout)
			defer cancel()
			if err := c.ephemeral(ctx, r.Channel, r.UserID, r.ThreadTS, notice); err != nil {
				c.log.Warn("answer a reply to a question", "user", r.UserID, "error", err.Error())
			}
		}
		if c.answers.LaterAnswer(r, tell) {
			continue
		}
		notice, err := c.answers.Answer(ctx, r)
		if err != nil {
			c.log.Error("answer question", "user", r.UserID, "error", err.Error())
			continue
		}
		if notice != "" {
			tell(context.WithoutCancel(ctx), notice)
		}
	}
}
