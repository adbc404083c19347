package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/quiet"
)

// Explain names the interval that mutes a rule, and the end of its occurrence: the
// policy's decision carries the hold, and its reason starts with it.
func TestExplainNamesTheMutingInterval(t *testing.T) {
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
	policy := inbox.PolicyConfig{Rules: []inbox.Rule{{MuteTimeIntervals: inbox.StringList{"standup"}}}}
	en := newEnv(t, envOpts{policy: policy, policyOpts: []inbox.PolicyOption{inbox.WithTimeIntervals(set)}})
	before := snapshot(t, en)

	// t0 is Monday 10:00 in Berlin: the standup ends at 11:00 CET.
	var x admin.Explanation
	body := map[string]any{"kind": "invoice-failed", "summary": "Invoice 3 failed", "attributes": map[string]any{"customer": "initech"}}
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
	require.Len(t, x.Notifications, 1)
	d := x.Notifications[0].Decision
	until := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	require.Equal(t, &inbox.Hold{By: "mute:standup", Until: until, Reason: "muted by interval standup (rule[0])"}, d.Hold)
	require.Equal(t, "muted by interval standup (rule[0]) until 2026-11-02T10:00:00Z; default: medium priority, thread idle → deliver now (wakes)", d.Reason)
	require.Equal(t, "mute:standup", x.Notifications[0].Record.HeldBy)
	require.Nil(t, x.Notifications[0].Record.DeliverAt)

	// At 11:00 the standup is over: nothing holds the event.
	en.clock.Advance(time.Hour)
	x = admin.Explanation{}
	en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
	require.Nil(t, x.Notifications[0].Decision.Hold)
	require.Equal(t, before, snapshot(t, en), "explain writes nothing")
}
