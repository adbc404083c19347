package inbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := now.Add(d); return &t }

func mustPolicy(t *testing.T, cfg PolicyConfig) *Policy {
	t.Helper()
	p, err := NewPolicy(cfg)
	require.NoError(t, err)
	return p
}

func TestDefaultTable(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{})
	cases := []struct {
		priority Priority
		presence Presence
		want     Decision
	}{
		{PriorityUrgent, PresenceActive, Decision{Action: ActionDeliver, DeliverAt: at(0), Reason: "default: urgent priority, thread active → deliver now", Code: "urgent"}},
		{PriorityUrgent, PresenceIdle, Decision{Action: ActionDeliver, DeliverAt: at(0), Reason: "default: urgent priority, thread idle → deliver now (wakes)", Code: "urgent"}},
		{PriorityHigh, PresenceActive, Decision{Action: ActionSummarize, SummaryAt: at(0), FullWhenIdle: true, Reason: "default: high priority, thread active → summary now, full notification when idle", Code: "active-high-summary-then-full"}},
		{PriorityHigh, PresenceIdle, Decision{Action: ActionDeliver, DeliverAt: at(0), Reason: "default: high priority, thread idle → deliver now (wakes)", Code: "idle-high"}},
		{PriorityMedium, PresenceActive, Decision{Action: ActionSummarize, SummaryAt: at(0), Reason: "default: medium priority, thread active → summary now, details stay in the inbox", Code: "active-batch-summary"}},
		{PriorityMedium, PresenceIdle, Decision{Action: ActionDeliver, DeliverAt: at(0), Reason: "default: medium priority, thread idle → deliver now (wakes)", Code: "idle-medium"}},
		{PriorityLow, PresenceActive, Decision{Action: ActionSummarize, SummaryAt: at(0), Reason: "default: low priority, thread active → held for a summary, never wakes", Code: "active-batch-summary"}},
		{PriorityLow, PresenceIdle, Decision{Action: ActionSummarize, SummaryAt: at(0), Reason: "default: low priority, thread idle → held for a summary, never wakes", Code: "idle-low-summary"}},
	}
	// The codes are Mastra's defaultNotificationDeliveryDecision reasons.
	for _, c := range cases {
		t.Run(string(c.priority)+"/"+string(c.presence), func(t *testing.T) {
			require.Equal(t, c.want, p.Decide(Subject{Source: "github", Kind: "comment", Priority: c.priority}, c.presence, now))
		})
	}
	// An empty priority is medium.
	require.Equal(t, ActionSummarize, p.Decide(Subject{Source: "github"}, PresenceActive, now).Action)
}

func TestLayersOverrideInOrder(t *testing.T) {
	cfg := PolicyConfig{
		Rules: []Rule{
			{Match: RuleMatch{Source: StringList{"github"}, Kind: StringList{"push"}}, ActionSpec: ActionSpec{Action: ActionSummarize, After: 10 * time.Minute}},
			{Match: RuleMatch{Attributes: map[string]string{"repo": "acme/secret"}}, ActionSpec: ActionSpec{Action: ActionDiscard}},
			{Match: RuleMatch{Route: StringList{"night"}}, ActionSpec: ActionSpec{Action: ActionDefer, At: "08:30"}},
		},
		Sources:    map[string]ActionSpec{"github": {Action: ActionDeliver}, "slack": {Action: ActionLog}},
		Priorities: map[Priority]ActionSpec{PriorityLow: {Action: ActionDiscard}, PriorityHigh: {Action: ActionSummarize, After: time.Minute}},
		Default:    &ActionSpec{Action: ActionDefer, After: time.Hour},
	}
	p := mustPolicy(t, cfg)
	decide := func(s Subject) Decision { return p.Decide(s, PresenceActive, now) }

	require.Equal(t, Decision{Action: ActionSummarize, SummaryAt: at(10 * time.Minute),
		Reason: "rule[0] source=github kind=push → summarize at 2026-11-02T09:10:00Z", Code: "rule"},
		decide(Subject{Source: "github", Kind: "push", Priority: PriorityLow}))
	require.Equal(t, Decision{Action: ActionDiscard, Reason: "rule[1] repo=acme/secret → discard", Code: "rule"},
		decide(Subject{Source: "github", Kind: "comment", Attributes: Attributes{{Key: "repo", Value: "acme/secret"}}}))
	require.Equal(t, Decision{Action: ActionDefer, DeliverAt: at(23*time.Hour + 30*time.Minute),
		Reason: "rule[2] route=night → defer at 2026-11-03T08:30:00Z", Code: "rule"},
		decide(Subject{Source: "email", Kind: "email", Route: "night"}))
	// Sources before priorities.
	require.Equal(t, Decision{Action: ActionDeliver, DeliverAt: at(0), Reason: "source github → deliver", Code: "source"},
		decide(Subject{Source: "github", Kind: "comment", Priority: PriorityLow}))
	require.Equal(t, Decision{Action: ActionLog, DeliverAt: at(0), Reason: "source slack → log", Code: "source"},
		decide(Subject{Source: "slack", Kind: "dm"}))
	// Priorities before the default.
	require.Equal(t, Decision{Action: ActionDiscard, Reason: "priority low → discard", Code: "priority"},
		decide(Subject{Source: "email", Kind: "email", Priority: PriorityLow}))
	require.Equal(t, Decision{Action: ActionSummarize, SummaryAt: at(time.Minute), Reason: "priority high → summarize at 2026-11-02T09:01:00Z", Code: "priority"},
		decide(Subject{Source: "email", Kind: "email", Priority: PriorityHigh}))
	// The default before the table.
	require.Equal(t, Decision{Action: ActionDefer, DeliverAt: at(time.Hour), Reason: "policy default → defer at 2026-11-02T10:00:00Z", Code: "default"},
		decide(Subject{Source: "email", Kind: "email", Priority: PriorityUrgent}))
}

func TestAtUsesTimezone(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Timezone: "Europe/Berlin", Default: &ActionSpec{Action: ActionDeliver, At: "09:00"}})
	d := p.Decide(Subject{Source: "x", Kind: "y"}, PresenceIdle, now) // 10:00 in Berlin: next 09:00 is tomorrow
	require.Equal(t, time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC), *d.DeliverAt)
}

func TestMessagesSkipThePolicy(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Default: &ActionSpec{Action: ActionDiscard}})
	d := p.Decide(Subject{Source: "slack", Kind: "dm", DeliverAs: DeliverAsMessage}, PresenceActive, now)
	require.Equal(t, ActionDeliver, d.Action)
	require.Equal(t, now, *d.DeliverAt)
}

func TestSourceNamesAreOrdinaryKeys(t *testing.T) {
	p := mustPolicy(t, PolicyConfig{Sources: map[string]ActionSpec{
		"constructor": {Action: ActionDiscard},
		"__proto__":   {Action: ActionLog},
	}})
	require.Equal(t, "source constructor → discard", p.Decide(Subject{Source: "constructor", Kind: "k"}, PresenceIdle, now).Reason)
	require.Equal(t, "source __proto__ → log", p.Decide(Subject{Source: "__proto__", Kind: "k"}, PresenceIdle, now).Reason)
	require.Equal(t, "default: medium priority, thread idle → deliver now (wakes)", p.Decide(Subject{Source: "toString", Kind: "k"}, PresenceIdle, now).Reason)
}

func TestPolicyValidation(t *testing.T) {
	_, err := NewPolicy(PolicyConfig{
		Timezone:   "Mars/Olympus",
		Rules:      []Rule{{ActionSpec: ActionSpec{Action: ActionDefer}}, {Match: RuleMatch{Priority: StringList{"meh"}}, ActionSpec: ActionSpec{Action: ActionDeliver, At: "25:00"}}},
		Priorities: map[Priority]ActionSpec{"huge": {Action: ActionDeliver}},
	})
	require.EqualError(t, err, `timezone: unknown time zone "Mars/Olympus"
rules[0]: defer needs after or at
rules[1].at: want a clock time HH:MM, got "25:00"
rules[1].match.priority: unknown priority "meh"
priorities.huge: unknown priority`)
}

func BenchmarkDecide(b *testing.B) {
	p, _ := NewPolicy(PolicyConfig{Rules: []Rule{
		{Match: RuleMatch{Source: StringList{"github"}, Kind: StringList{"push"}}, ActionSpec: ActionSpec{Action: ActionSummarize, After: time.Minute}},
		{Match: RuleMatch{Attributes: map[string]string{"repo": "acme/secret"}}, ActionSpec: ActionSpec{Action: ActionDiscard}},
	}})
	s := Subject{Source: "github", Kind: "comment", Priority: PriorityHigh, Attributes: Attributes{{Key: "repo", Value: "acme/api"}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Decide(s, PresenceActive, now)
	}
}
