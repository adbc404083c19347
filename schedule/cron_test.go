package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/schedule"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// fires lists the fires of expr in tz from (exclusive) to until (inclusive).
func fires(t *testing.T, expr, tz, from, until string) []string {
	t.Helper()
	c, err := schedule.ParseCron(expr, tz)
	require.NoError(t, err)
	var out []string
	for at := c.Next(utc(from)); !at.After(utc(until)); at = c.Next(at) {
		require.False(t, at.IsZero())
		out = append(out, at.Format(time.RFC3339))
	}
	return out
}

// Five fields, or six with seconds first; anything else names the field at fault.
func TestCronFields(t *testing.T) {
	require.Equal(t, []string{"2026-11-02T09:00:00Z", "2026-11-03T09:00:00Z"},
		fires(t, "0 9 * * 1-5", "", "2026-11-01T00:00:00Z", "2026-11-03T12:00:00Z"), "five fields, weekdays only")
	require.Equal(t, []string{"2026-11-02T09:00:10Z", "2026-11-02T09:00:20Z"},
		fires(t, "*/10 * * * * *", "UTC", "2026-11-02T09:00:00Z", "2026-11-02T09:00:20Z"), "six fields: seconds first")

	for expr, want := range map[string]string{
		"* * * *":             "cron",
		"0 0 0 * * * *":       "cron",
		"@every 5m":           "cron",
		"@daily":              "cron",
		"TZ=UTC 0 9 * * *":    "cron",
		"61 * * * *":          "cron",
		"0 0 30 2 *":          "cron", // never fires
		"not a cron at all!!": "cron",
	} {
		_, err := schedule.ParseCron(expr, "UTC")
		require.Error(t, err, expr)
		require.Contains(t, err.Error(), want+": ", expr)
	}
	for _, tz := range []string{"Mars/Olympus", "Local", "+02:00"} {
		_, err := schedule.ParseCron("0 9 * * *", tz)
		require.ErrorContains(t, err, "timezone: ", tz)
	}
}

// Europe/Berlin springs forward on 2026-03-29 (02:00 CET → 03:00 CEST) and falls back on
// 2026-10-25 (03:00 CEST → 02:00 CET). A daily 09:00 stays at 09:00 local; 02:30 does
// not exist on the spring day and fires once (the first time) on the autumn day; a
// wildcard-hour schedule goes on every 30 minutes of real time through both.
func TestCronAcrossDaylightSaving(t *testing.T) {
	const berlin = "Europe/Berlin"
	require.Equal(t, []string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"},
		fires(t, "0 9 * * *", berlin, "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z"))
	require.Equal(t, []string{"2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"},
		fires(t, "0 9 * * *", berlin, "2026-10-24T00:00:00Z", "2026-10-26T12:00:00Z"))

	require.Equal(t, []string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"},
		fires(t, "30 2 * * *", berlin, "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z"), "02:30 does not exist on the 29th")
	require.Equal(t, []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
		fires(t, "30 2 * * *", berlin, "2026-10-24T00:00:00Z", "2026-10-26T12:00:00Z"), "02:30 shows twice on the 25th: one fire")

	require.Equal(t, []string{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"},
		fires(t, "*/30 * * * *", berlin, "2026-03-29T00:00:00Z", "2026-03-29T01:30:00Z"), "every 30 minutes of real time")
	require.Equal(t, []string{"2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z", "2026-10-25T02:00:00Z"},
		fires(t, "*/30 * * * *", berlin, "2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"), "through the repeated hour")
}

// Latest finds the last fire before now in a few dozen steps, however long ago.
func TestCronLatest(t *testing.T) {
	c, err := schedule.ParseCron("*/5 * * * * *", "UTC")
	require.NoError(t, err)
	require.Equal(t, utc("2029-01-01T00:00:00Z"), c.Latest(utc("2026-01-01T00:00:05Z"), utc("2029-01-01T00:00:04.9Z")))
	require.Equal(t, utc("2026-01-01T00:00:05Z"), c.Latest(utc("2026-01-01T00:00:05Z"), utc("2026-01-01T00:00:05Z")))
	require.True(t, c.Latest(utc("2026-01-01T00:00:05Z"), utc("2026-01-01T00:00:04Z")).IsZero())
}

// Validation names each bad field as the API does, and as config.yaml does.
func TestSpecCheckNamesFields(t *testing.T) {
	spec := schedule.Spec{ID: "bad id", Agent: "nobody", Cron: "* *", Timezone: "Nowhere/Land", SignalType: "state",
		TagName: "1tag", Attributes: map[string]any{"ok": map[string]any{"nested": 1}},
		IfActive: schedule.IfActive{Behavior: "wake"}, IfIdle: schedule.IfIdle{Behavior: "deliver"}, CatchUp: "all"}
	err := spec.WithDefaults().Check(func(a string) bool { return a == "coder" })
	require.ErrorIs(t, err, schedule.ErrInvalid)
	var inv *schedule.InvalidError
	require.True(t, errors.As(err, &inv))
	var fields []string
	for _, f := range inv.Fields {
		fields = append(fields, f.Field)
	}
	require.ElementsMatch(t, []string{"id", "agent", "resourceId", "threadId", "timezone", "contents", "signalType", "tagName",
		"attributes", "ifActive.behavior", "ifIdle.behavior", "catchUp"}, fields)
	require.Equal(t, "if_idle.stream_options", schedule.SnakeCase("ifIdle.streamOptions"))
	require.Equal(t, "resource_id", schedule.SnakeCase("resourceId"))

	ok := schedule.Spec{ID: "daily", Agent: "coder", ResourceID: "r", ThreadID: "t", Cron: "0 9 * * *", Contents: "standup"}.WithDefaults()
	require.NoError(t, ok.Check(func(a string) bool { return a == "coder" }))
	require.Equal(t, "notification", ok.SignalType)
	require.Equal(t, "schedule", ok.TagName)
	require.Equal(t, schedule.CatchUpNone, ok.CatchUp)
	require.Equal(t, "schedule:daily:2026-11-02T09:00:00Z", schedule.FireID("daily", utc("2026-11-02T10:00:00+01:00")))
}
