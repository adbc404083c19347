package delivery_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/delivery/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/quiet"
)

// A record its rule mutes stays pending and untold while the interval lasts: no wake,
// no summary, nothing due. What the rule does not match goes out as usual, and after
// the interval's end a new record is delivered at once. (Its release at the end is
// the held records' release, time-based on held_until.)
func TestMutedRecordIsNotSent(t *testing.T) {
	var entries []quiet.Interval
	require.NoError(t, yaml.Unmarshal([]byte(`
- name: standup
  time_intervals:
    - weekdays: ["monday:friday"]
      times: [{start_time: "09:30", end_time: "11:00"}]
      location: Europe/Berlin
`), &entries))
	set, err := quiet.NewSet(entries)
	require.NoError(t, err)
	cfg := deliverytest.Config{
		Policy:        inbox.PolicyConfig{Rules: []inbox.Rule{{Match: inbox.RuleMatch{Source: inbox.StringList{"github"}}, MuteTimeIntervals: inbox.StringList{"standup"}}}},
		PolicyOptions: []inbox.PolicyOption{inbox.WithTimeIntervals(set)},
	}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		// Monday 10:00 in Berlin: inside the standup, which ends at 11:00 CET.
		k := key("standup")
		muted := create(t, e, k, comment("Jane asked for a review", inbox.PriorityHigh))
		e.Pass()
		require.Empty(t, e.Log(k), "muted: no wake, no frame")
		r := e.Record(muted.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status)
		require.Nil(t, r.DeliverAt)
		require.Nil(t, r.SummaryAt)
		require.True(t, strings.HasPrefix(r.Reason, "muted by interval standup (rule[0]) until 2026-11-02T10:00:00Z; "), r.Reason)

		other := key("billing")
		body := comment("Invoice 7 failed", inbox.PriorityHigh)
		body["source"] = "generic"
		create(t, e, other, body)
		e.Pass()
		require.NotEmpty(t, e.Log(other), "a record the rule does not match is delivered")

		e.Clock.Advance(time.Hour) // 11:00 in Berlin: the standup is over
		after := create(t, e, k, comment("CI failed on main", inbox.PriorityHigh))
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(after.RecordID).Status)
	})
}
