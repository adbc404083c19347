package inbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/condition"
)

// The three expression examples of docs/policy.md.
func TestPolicyWhenExamples(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Rules: []Rule{
		{When: `metadata.author_is_bot && kind == "comment"`, ActionSpec: ActionSpec{Action: ActionDiscard}},
		{When: `presence == "active" && priority == "medium"`, ActionSpec: ActionSpec{Action: ActionDefer, After: 30 * time.Minute}},
		{Match: RuleMatch{Source: StringList{"github"}}, When: `payload.check_run.name matches "^lint"`, ActionSpec: ActionSpec{Action: ActionSummarize}},
	}})
	require.True(t, p.UsesExpressions())

	bot := Subject{Source: "github", Kind: "comment", Priority: PriorityMedium, DeliverAs: DeliverAsNotification, Metadata: map[string]any{"author_is_bot": true}}
	d := p.Decide(bot, PresenceIdle, now)
	require.Equal(t, ActionDiscard, d.Action)
	require.Equal(t, `rule[0] when metadata.author_is_bot && kind == "comment" → discard`, d.Reason)

	human := bot
	human.Metadata = map[string]any{"author_is_bot": false}
	require.Equal(t, "default: medium priority, thread idle → deliver now (wakes)", p.Decide(human, PresenceIdle, now).Reason)
	d = p.Decide(human, PresenceActive, now)
	require.Equal(t, Decision{Action: ActionDefer, DeliverAt: at(30 * time.Minute),
		Reason: `rule[1] when presence == "active" && priority == "medium" → defer at 2026-11-02T09:30:00Z`, Code: CodeRule}, d)

	ci := Subject{Source: "github", Kind: "ci-failure", Priority: PriorityHigh, DeliverAs: DeliverAsNotification,
		Payload: condition.DecodePayload([]byte(`{"action":"completed","check_run":{"name":"lint (go 1.26)","conclusion":"failure"}}`))}
	d = p.Decide(ci, PresenceIdle, now)
	require.Equal(t, ActionSummarize, d.Action)
	require.Equal(t, `rule[2] when payload.check_run.name matches "^lint" and source=github → summarize`, d.Reason)
	ci.Payload = condition.DecodePayload([]byte(`{"check_run":{"name":"test"}}`))
	require.Equal(t, ActionDeliver, p.Decide(ci, PresenceIdle, now).Action)
	ci.Payload = nil // an email, or a body that is not JSON: a non-match, not a failure
	require.Equal(t, ActionDeliver, p.Decide(ci, PresenceIdle, now).Action)
}

func TestPolicyWhenSeesThreadAndClock(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Rules: []Rule{
		{When: `thread.agent == "coder" && thread.id startsWith "acme/" && now.Hour() >= 9 && attributes.repo == "acme/api"`, ActionSpec: ActionSpec{Action: ActionLog}},
	}})
	s := Subject{Source: "github", Kind: "push", DeliverAs: DeliverAsNotification, Thread: ThreadKey{Agent: "coder", Resource: "r", Thread: "acme/api#1"},
		Attributes: Attributes{}.Set("repo", "acme/api")}
	require.Equal(t, ActionLog, p.Decide(s, PresenceIdle, now).Action)
	require.NotEqual(t, ActionLog, p.Decide(s, PresenceIdle, now.Add(-time.Hour)).Action)
}

func TestPolicyWhenConfigErrors(t *testing.T) {
	_, err := NewPolicy(PolicyConfig{Rules: []Rule{
		{When: `kind == "comment"`, ActionSpec: ActionSpec{Action: ActionDiscard}},
		{When: `kind == "comment" && presnce == "idle"`, ActionSpec: ActionSpec{Action: ActionDiscard}},
		{When: `priority`, ActionSpec: ActionSpec{Action: ActionDiscard}},
	}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "rules[1].when: line 1, column 22: unknown name presnce")
	require.Contains(t, err.Error(), "rules[2].when: expected bool, but got string")
	require.NotContains(t, err.Error(), "rules[0]")
}

func TestSummaryFormat(t *testing.T) {
	require.Equal(t, SummaryFormatMastra, mustPolicy(t, PolicyConfig{}).SummaryFormat())
	require.Equal(t, SummaryFormatDetailed, mustPolicy(t, PolicyConfig{SummaryFormat: "detailed"}).SummaryFormat())
	_, err := NewPolicy(PolicyConfig{SummaryFormat: "verbose"})
	require.EqualError(t, err, `summary_format: unknown "verbose" (want mastra or detailed)`)
}

// An event's `payload` is what its connector read (a form's fields) when it says so,
// else its body decoded as JSON, nil when that is not JSON; read once per event.
func TestEventExprPayload(t *testing.T) {
	form := &Event{Body: []byte("Body=STOP&From=%2B14155550123")}
	require.Nil(t, form.ExprPayload(), "a form is not JSON")
	form = &Event{Body: []byte("Body=STOP&From=%2B14155550123")}
	form.SetExprPayload(map[string]any{"Body": "STOP", "From": "+14155550123"})
	require.Equal(t, map[string]any{"Body": "STOP", "From": "+14155550123"}, form.ExprPayload())
	require.Equal(t, []byte("Body=STOP&From=%2B14155550123"), form.Body, "the body stays as received")

	ev := &Event{Body: []byte(`{"action": "opened"}`)}
	require.Equal(t, map[string]any{"action": "opened"}, ev.ExprPayload())
	ev.Body = []byte(`{"action": "closed"}`)
	require.Equal(t, map[string]any{"action": "opened"}, ev.ExprPayload(), "decoded once")
}
