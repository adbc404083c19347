package inbox

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/quiet"
)

const quietIntervals = `
- name: nights
  time_intervals:
    - times: [{start_time: "22:00", end_time: "24:00"}, {start_time: "00:00", end_time: "07:00"}]
      location: Europe/Berlin
- name: business_hours
  time_intervals:
    - weekdays: ["monday:friday"]
      times: [{start_time: "09:00", end_time: "17:00"}]
      location: America/New_York
`

func quietPolicy(t *testing.T, cfg PolicyConfig) *Policy {
	t.Helper()
	var entries []quiet.Interval
	require.NoError(t, yaml.Unmarshal([]byte(quietIntervals), &entries))
	set, err := quiet.NewSet(entries)
	require.NoError(t, err)
	p, err := NewPolicy(cfg, WithTimeIntervals(set))
	require.NoError(t, err)
	return p
}

func utcAt(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

var push = Subject{Source: "github", Kind: "push", Priority: PriorityMedium, DeliverAs: DeliverAsNotification}

// A muted rule's records are held until the end of the interval's occurrence, in
// Berlin's wall time on both nights its clocks change (the spring night an hour
// shorter, the autumn one an hour longer), and scheduled as usual outside it.
func TestPolicyMuteHoldsUntilTheOccurrenceEnds(t *testing.T) {
	p := quietPolicy(t, PolicyConfig{Rules: []Rule{
		{Match: RuleMatch{Source: StringList{"github"}}, MuteTimeIntervals: StringList{"nights"}, ActionSpec: ActionSpec{Action: ActionDeliver}},
	}})
	for _, tc := range []struct{ at, until string }{
		{"2026-03-28T22:00:00Z", "2026-03-29T05:00:00Z"}, // 23:00 CET → 07:00 CEST
		{"2026-03-29T01:30:00Z", "2026-03-29T05:00:00Z"}, // 03:30 CEST, just after the jump
		{"2026-10-24T20:30:00Z", "2026-10-25T06:00:00Z"}, // 22:30 CEST → 07:00 CET
		{"2026-10-25T01:30:00Z", "2026-10-25T06:00:00Z"}, // 02:30 CET, the second one
	} {
		now := utcAt(tc.at)
		d := p.Decide(push, PresenceIdle, now)
		hold := &Hold{By: "mute:nights", Until: utcAt(tc.until), Reason: "muted by interval nights (rule[0])"}
		require.Equal(t, Decision{Action: ActionDeliver, Code: CodeRule, Hold: hold,
			Reason: "muted by interval nights (rule[0]) until " + tc.until + "; rule[0] source=github → deliver"}, d, tc.at)
		r := NewRecord("r1", "e1", Notification{Source: "github", Kind: "push"}, d, now)
		require.Equal(t, StatusPending, r.Status)
		require.Nil(t, r.DeliverAt)
		require.Nil(t, r.SummaryAt)
		require.Equal(t, "mute:nights", r.HeldBy)
		require.Equal(t, utcAt(tc.until), *r.HeldUntil)
	}
	// 07:00 CEST on the spring morning: the night is over.
	day := utcAt("2026-03-29T05:00:00Z")
	d := p.Decide(push, PresenceIdle, day)
	require.Nil(t, d.Hold)
	require.Equal(t, &day, d.DeliverAt)
}

// A mute-only rule (no action) holds what the layers after it decide, while muted, and
// otherwise does not apply. What would be discarded or persisted is not held.
func TestPolicyMuteOnlyRule(t *testing.T) {
	p := quietPolicy(t, PolicyConfig{
		Rules: []Rule{
			{Match: RuleMatch{Source: StringList{"github"}}, MuteTimeIntervals: StringList{"nights"}},
			{Match: RuleMatch{Kind: StringList{"push"}}, ActionSpec: ActionSpec{Action: ActionSummarize}},
			{Match: RuleMatch{Kind: StringList{"bot"}}, ActionSpec: ActionSpec{Action: ActionDiscard}},
			// A later rule's own mute does not replace the first hold.
			{Match: RuleMatch{Kind: StringList{"ci"}}, MuteTimeIntervals: StringList{"nights"}, ActionSpec: ActionSpec{Action: ActionDeliver}},
		},
		Sources: map[string]ActionSpec{"github": {Action: ActionLog}},
	})
	night, day := utcAt("2026-11-26T23:30:00Z"), utcAt("2026-11-26T12:00:00Z")
	until := utcAt("2026-11-27T06:00:00Z")

	d := p.Decide(push, PresenceIdle, night)
	require.Equal(t, ActionSummarize, d.Action)
	require.Equal(t, &Hold{By: "mute:nights", Until: until, Reason: "muted by interval nights (rule[0])"}, d.Hold)
	require.Equal(t, "muted by interval nights (rule[0]) until 2026-11-27T06:00:00Z; rule[1] kind=push → summarize", d.Reason)
	require.Nil(t, d.SummaryAt)

	d = p.Decide(push, PresenceIdle, day)
	require.Nil(t, d.Hold)
	require.Equal(t, "rule[1] kind=push → summarize", d.Reason)

	issue := push
	issue.Kind = "issue"
	d = p.Decide(issue, PresenceIdle, night)
	require.Equal(t, ActionLog, d.Action)
	require.True(t, strings.HasPrefix(d.Reason, "muted by interval nights (rule[0]) until "), d.Reason)
	require.Nil(t, d.DeliverAt)
	require.Nil(t, p.Decide(issue, PresenceIdle, day).Hold)

	ci := push
	ci.Kind = "ci"
	require.Equal(t, "mute:nights", p.Decide(ci, PresenceIdle, night).Hold.By)
	require.Equal(t, "muted by interval nights (rule[0])", p.Decide(ci, PresenceIdle, night).Hold.Reason)

	bot := push
	bot.Kind = "bot"
	d = p.Decide(bot, PresenceIdle, night)
	require.Equal(t, ActionDiscard, d.Action)
	require.Nil(t, d.Hold)

	// Not a github record: the mute-only rule does not match; nothing is held.
	other := Subject{Source: "slack", Kind: "message", Priority: PriorityLow, DeliverAs: DeliverAsNotification}
	require.Nil(t, p.Decide(other, PresenceIdle, night).Hold)
	// A message (user input) never goes through the rules, so no mute holds it.
	msg := push
	msg.DeliverAs = DeliverAsMessage
	require.Nil(t, p.Decide(msg, PresenceIdle, night).Hold)
}

// A rule with active_time_intervals applies only while one is active: business hours in
// New York, on the injected clock across both of its daylight-saving changes.
func TestPolicyActiveTimeIntervals(t *testing.T) {
	p := quietPolicy(t, PolicyConfig{Rules: []Rule{
		{Match: RuleMatch{Source: StringList{"github"}}, ActiveTimeIntervals: StringList{"business_hours"}, ActionSpec: ActionSpec{Action: ActionQueue},
			StreamOptions: map[string]any{"maxSteps": 3}},
	}})
	for _, tc := range []struct {
		at     string
		active bool
	}{
		{"2026-03-06T14:30:00Z", true},  // Fri 09:30 EST
		{"2026-03-06T13:30:00Z", false}, // Fri 08:30 EST
		{"2026-03-09T13:30:00Z", true},  // Mon 09:30 EDT, after the spring change
		{"2026-03-09T21:30:00Z", false}, // Mon 17:30 EDT
		{"2026-03-08T15:00:00Z", false}, // Sunday
		{"2026-10-30T13:30:00Z", true},  // Fri 09:30 EDT
		{"2026-11-02T13:30:00Z", false}, // Mon 08:30 EST, after the autumn change
		{"2026-11-02T14:30:00Z", true},  // Mon 09:30 EST
	} {
		now := utcAt(tc.at)
		d := p.Decide(push, PresenceIdle, now)
		require.Equal(t, tc.active, d.Action == ActionQueue, "%s: %s", tc.at, d.Reason)
		if !tc.active {
			require.Equal(t, CodeIdleMedium, d.Code, tc.at)
		}
		opts := p.StreamOptions(Record{Source: "github", Kind: "push"}, PresenceIdle, now)
		require.Equal(t, tc.active, opts != nil, tc.at)
	}
}

// Interval names are checked when the policy is built; the errors name the key.
func TestPolicyTimeIntervalErrors(t *testing.T) {
	var entries []quiet.Interval
	require.NoError(t, yaml.Unmarshal([]byte(quietIntervals), &entries))
	set, err := quiet.NewSet(entries)
	require.NoError(t, err)
	cfg := PolicyConfig{Rules: []Rule{
		{MuteTimeIntervals: StringList{"nights"}},
		{MuteTimeIntervals: StringList{"nights", "nite"}, ActionSpec: ActionSpec{Action: ActionDeliver}},
		{ActiveTimeIntervals: StringList{"weekends"}, ActionSpec: ActionSpec{Action: ActionDeliver}},
	}}
	_, err = NewPolicy(cfg, WithTimeIntervals(set))
	require.EqualError(t, err, `rules[1].mute_time_intervals: unknown time interval "nite" (not in time_intervals)`+"\n"+
		`rules[2].active_time_intervals: unknown time interval "weekends" (not in time_intervals)`)
	_, err = NewPolicy(PolicyConfig{Rules: []Rule{{MuteTimeIntervals: StringList{"nights"}}}})
	require.EqualError(t, err, `rules[0].mute_time_intervals: unknown time interval "nights" (not in time_intervals)`)

	// Only a rule with mute intervals may go without an action.
	_, err = NewPolicy(PolicyConfig{Rules: []Rule{{ActiveTimeIntervals: StringList{"nights"}}}}, WithTimeIntervals(set))
	require.ErrorContains(t, err, `rules[0].action: unknown action ""`)
	_, err = NewPolicy(PolicyConfig{Rules: []Rule{{MuteTimeIntervals: StringList{"nights"}, ActionSpec: ActionSpec{After: time.Hour}}}}, WithTimeIntervals(set))
	require.ErrorContains(t, err, `rules[0].action: unknown action ""`)
}

// The policy is a Holder: a record deferred into the night before it began is held
// when it falls due there; in the day nothing holds it.
func TestPolicyHeldWhenDue(t *testing.T) {
	p := quietPolicy(t, PolicyConfig{Rules: []Rule{
		{Match: RuleMatch{Source: StringList{"github"}}, MuteTimeIntervals: StringList{"nights"}, ActionSpec: ActionSpec{Action: ActionDefer, At: "23:00"}},
	}})
	var holder Holder = p
	evening := utcAt("2026-11-26T19:00:00Z") // 20:00 in Berlin: not muted yet
	d := p.Decide(push, PresenceIdle, evening)
	require.Nil(t, d.Hold)
	require.Equal(t, utcAt("2026-11-26T23:00:00Z"), *d.DeliverAt)

	h, ok := holder.Held(push, *d.DeliverAt) // 00:00 in Berlin
	require.True(t, ok)
	require.Equal(t, Hold{By: "mute:nights", Until: utcAt("2026-11-27T06:00:00Z"), Reason: "muted by interval nights (rule[0])"}, h)
	_, ok = holder.Held(push, utcAt("2026-11-27T06:00:00Z"))
	require.False(t, ok)
}
