package inbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSnoozeUntil(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for raw, want := range map[string]string{
		"":                          "until: required",
		"tomorrow":                  `until: want an RFC 3339 time`,
		"2026-11-02":                `until: want an RFC 3339 time`,
		"2026-11-02T08:59:59Z":      "is not in the future",
		"2026-12-02T09:00:01Z":      "more than 30 days ahead",
		"2026-11-02T11:00:00+02:00": "is not in the future",
	} {
		_, err := ParseSnoozeUntil(raw, now)
		require.ErrorContains(t, err, want, raw)
	}
	got, err := ParseSnoozeUntil("2026-12-02T10:00:00+01:00", now)
	require.NoError(t, err, "30 days exactly")
	require.Equal(t, now.Add(MaxSnooze), got)
	require.Equal(t, time.UTC, got.Location())
}

// A merge into a snoozed record updates it and keeps it hidden; an urgent one ends the
// snooze with the fresh decision in full (not the earlier-of merge of due times).
func TestMergeIntoSnoozed(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	until := now.Add(time.Hour)
	n := Notification{Thread: ThreadKey{Agent: "a", Resource: "r", Thread: "t"}, Source: "github", Kind: "comment", Summary: "one", CoalesceKey: "k"}
	r := NewRecord("id", "ev", n, Decision{Action: ActionDeliver, DeliverAt: &now}, now)
	r.Status, r.SnoozedUntil, r.DeliverAt = StatusSnoozed, &until, nil
	require.True(t, r.Mergeable(n))

	n.Summary = "two"
	later := now.Add(time.Minute)
	r.Merge(n, Decision{Action: ActionDeliver, DeliverAt: &later, Reason: "fresh"}, later)
	require.Equal(t, StatusSnoozed, r.Status)
	require.Equal(t, "two", r.Summary)
	require.Equal(t, 2, r.CoalescedCount)
	require.Nil(t, r.DueAt(), "still hidden")

	n.Priority = PriorityUrgent
	r.Merge(n, Decision{Action: ActionDeliver, DeliverAt: &later, Reason: "default: urgent"}, later)
	require.Equal(t, StatusPending, r.Status)
	require.Nil(t, r.SnoozedUntil)
	require.Equal(t, later, *r.DueAt())
	require.Equal(t, "snooze ended by an urgent update; default: urgent", r.Reason)
}
