package gateway

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// time_intervals in Alertmanager's syntax feed the policy's rules: a night in Berlin
// mutes the rule, business hours make the other apply.
func TestTimeIntervalsConfig(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte(`
time_intervals:
  - name: nights
    time_intervals:
      - times:
          - start_time: "22:00"
            end_time: "24:00"
          - start_time: "00:00"
            end_time: "07:00"
        location: Europe/Berlin
  - name: business_hours
    time_intervals:
      - weekdays: ["monday:friday"]
        days_of_month: ["1:-1"]
        months: ["january:december"]
        years: ["2026:2030"]
        times: [{start_time: "09:00", end_time: "17:00"}]
        location: Europe/Berlin
policy:
  rules:
    - match: { source: github }
      mute_time_intervals: [nights]
    - match: { kind: push }
      active_time_intervals: business_hours
      action: summarize
`), noEnv)
	require.NoError(t, err)
	policy, err := cfg.newPolicy()
	require.NoError(t, err)
	push := inbox.Subject{Source: "github", Kind: "push", DeliverAs: inbox.DeliverAsNotification}
	night := time.Date(2026, 11, 26, 23, 30, 0, 0, time.UTC) // Thursday, 00:30 in Berlin
	d := policy.Decide(push, inbox.PresenceIdle, night)
	require.Equal(t, &inbox.Hold{By: "mute:nights", Until: time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC),
		Reason: "muted by interval nights (rule[0])"}, d.Hold)
	d = policy.Decide(push, inbox.PresenceIdle, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	require.Nil(t, d.Hold)
	require.Equal(t, inbox.ActionSummarize, d.Action)
}

// Problems are named by key: an unknown interval name, an unknown key inside an
// interval, a bad time, a duplicate name.
func TestTimeIntervalsConfigErrors(t *testing.T) {
	got := problems(t, `
time_intervals:
  - name: nights
    time_intervals:
      - times: [{start_time: "22:00", end_time: "24:00"}]
        hours: [1]
policy:
  rules:
    - match: { source: github }
      mute_time_intervals: [nights, nite]
      action: deliver
    - active_time_intervals: [weekend]
      action: log
`, noEnv)
	require.Equal(t, []string{
		"time_intervals[0].time_intervals[0].hours: unknown key (line 6)",
		`policy.rules[0].mute_time_intervals: unknown time interval "nite" (not in time_intervals)`,
		`policy.rules[1].active_time_intervals: unknown time interval "weekend" (not in time_intervals)`,
	}, got)

	got = problems(t, `
time_intervals:
  - name: nights
    time_intervals: []
  - name: nights
    time_intervals: []
`, noEnv)
	require.Equal(t, []string{`time_intervals[1].name: duplicate time interval "nights"`}, got)

	// Alertmanager's own checks, each at its line; every one is reported in one pass.
	got = problems(t, `
time_intervals:
  - name: nights
    time_intervals:
      - times: [{start_time: "07:00", end_time: "06:00"}]
        weekdays: [funday, monday]
  - name: days
    time_intervals:
      - location: Mars/Olympus
        months: ["may:march"]
`, noEnv)
	require.Equal(t, []string{
		"time_intervals[0].time_intervals[0].times[0].end_time: start time cannot be equal or greater than end time (line 5)",
		"time_intervals[0].time_intervals[0].weekdays: funday is not a valid weekday (line 6)",
		"time_intervals[1].time_intervals[0].location: unknown time zone Mars/Olympus (line 9)",
		"time_intervals[1].time_intervals[0].months: end month march is before start month may (line 10)",
	}, got)
}

// The example of docs/policy.md's quiet hours loads as it is.
func TestDocQuietHoursExampleLoads(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "## Quiet hours")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	cfg, err := ParseConfig("policy.yaml", []byte(minimal+block), env("CODER_TOKEN", "a-long-enough-token"))
	require.NoError(t, err)
	require.Len(t, cfg.TimeIntervals, 2)
	_, err = cfg.newPolicy()
	require.NoError(t, err)
}
