package delivery_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
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
		released := e.Record(muted.RecordID)
		require.Equal(t, inbox.StatusDelivered, released.Status, "released at the standup's end, decided again: %s", released.Reason)
		require.Empty(t, released.HeldBy)
		var told []string
		for _, f := range e.Log(k) {
			if f.Event == agent.EventSignal {
				told = append(told, f.RecordIDs...)
			}
		}
		require.ElementsMatch(t, []string{muted.RecordID, after.RecordID}, told, "each told once")
	})
}

// A record decided before its rule's muting interval began (deferred into it) is held
// when it falls due inside the interval, not sent, and at the interval's end decided
// again through the policy as of that moment, as every held record is.
func TestDeferredIntoAMuteIsHeldWhenDue(t *testing.T) {
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
		Policy: inbox.PolicyConfig{Rules: []inbox.Rule{
			{Match: inbox.RuleMatch{Source: inbox.StringList{"github"}}, MuteTimeIntervals: inbox.StringList{"standup"}},
			{Match: inbox.RuleMatch{Kind: inbox.StringList{"deploy"}}, ActionSpec: inbox.ActionSpec{Action: inbox.ActionDefer, After: time.Hour}},
		}},
		PolicyOptions: []inbox.PolicyOption{inbox.WithTimeIntervals(set)},
	}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		// Monday 10:00 in Berlin is inside the standup: step back to 09:00, before it.
		e.Clock.Advance(-time.Hour)
		k := key("deploys")
		body := comment("Deploy 7 is ready", inbox.PriorityHigh)
		body["kind"] = "deploy"
		deferred := create(t, e, k, body)
		e.Pass()
		r := e.Record(deferred.RecordID)
		require.NotNil(t, r.DeliverAt, "not muted yet: deferred an hour, into the standup")
		require.Empty(t, r.HeldBy)

		e.Clock.Advance(time.Hour) // 10:00: due, and muted
		e.Pass()
		r = e.Record(deferred.RecordID)
		require.Equal(t, inbox.StatusPending, r.Status, "held when due, not sent")
		require.Equal(t, "mute:standup", r.HeldBy)
		require.Nil(t, r.DeliverAt)
		require.Empty(t, e.Log(k))

		e.Clock.Advance(time.Hour) // 11:00: the standup is over, decided again as of now
		e.Pass()
		r = e.Record(deferred.RecordID)
		require.Empty(t, r.HeldBy)
		require.True(t, strings.HasPrefix(r.Reason, "hold by mute:standup ended; rule[1] kind=deploy → defer"), r.Reason)
		require.NotNil(t, r.DeliverAt, "the policy as of the release: its rule defers again")
		e.Clock.Advance(time.Hour)
		e.Pass()
		require.Equal(t, inbox.StatusDelivered, e.Record(deferred.RecordID).Status)
		require.Len(t, e.Log(k), 2, "a run and the one signal")
	})
}
