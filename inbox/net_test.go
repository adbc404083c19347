package inbox_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func laneNote(state string) inbox.Notification {
	return inbox.Notification{Thread: inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"},
		Source: "github", Kind: "ci-" + state, Summary: state, NetKey: "ci:lint", State: state, RestState: "success"}
}

func TestDecideNet(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	pending := func(id string, count int) inbox.Record {
		r := inbox.NewRecord(id, "", laneNote("failure"), inbox.Decision{Action: inbox.ActionDeliver, DeliverAt: &now}, now)
		r.CoalescedCount = count
		return r
	}
	for _, tc := range []struct {
		name      string
		n         inbox.Notification
		lane      inbox.NetLane
		unchanged bool
		count     int
		reason    string
	}{
		{"the rest state with nothing told", laneNote("success"), inbox.NetLane{}, true, 1, "net state unchanged: success"},
		{"a failure with nothing told", laneNote("failure"), inbox.NetLane{}, false, 1, "net state changed: success (rest state) → failure"},
		{"a success after a told failure", laneNote("success"), inbox.NetLane{Told: "failure", HasTold: true}, false, 1,
			"net state changed: failure (last told) → success"},
		{"a failure after a told failure", laneNote("failure"), inbox.NetLane{Told: "failure", HasTold: true}, true, 1,
			"net state unchanged: failure"},
		{"a pending failure then success", laneNote("success"), inbox.NetLane{Pending: []inbox.Record{pending("r1", 3)}}, true, 4,
			"net state unchanged: success"},
		{"no rest state: anything new is news", func() inbox.Notification {
			n := laneNote("open")
			n.RestState = ""
			return n
		}(), inbox.NetLane{}, false, 1, "net state new: open"},
		{"no state: the newest record stands", func() inbox.Notification {
			n := laneNote("")
			n.RestState = ""
			return n
		}(), inbox.NetLane{Pending: []inbox.Record{pending("r1", 1)}}, false, 2, "net state not given: the newest record of the lane stands"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := inbox.DecideNet(tc.n, tc.lane)
			require.Equal(t, tc.unchanged, d.Unchanged)
			require.Equal(t, tc.count, d.CoalescedCount)
			require.Equal(t, tc.reason, d.Reason)
			r := inbox.NewRecord("new", "", tc.n, inbox.Decision{Action: inbox.ActionDeliver, DeliverAt: &now, Reason: "default"}, now)
			r.ApplyNet(d)
			if tc.unchanged {
				require.Equal(t, inbox.StatusSuperseded, r.Status)
				require.Nil(t, r.DueAt(), "reaches nothing")
			} else {
				require.Equal(t, inbox.StatusPending, r.Status)
				require.Equal(t, "default", r.Reason)
			}
		})
	}
}

func TestSupersede(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	r := inbox.NewRecord("r1", "", laneNote("failure"), inbox.Decision{Action: inbox.ActionDeliver, DeliverAt: &now}, now)
	later := now.Add(time.Minute)
	r.Supersede("r2", "success", later)
	require.Equal(t, inbox.StatusSuperseded, r.Status)
	require.True(t, r.Status.Terminal())
	require.Equal(t, "r2", r.SupersededBy)
	require.Equal(t, "superseded by r2 (net state now success)", r.Reason)
	require.Equal(t, later, r.UpdatedAt)
	require.Nil(t, r.DueAt())
}

func TestLaneRecordsNeverMerge(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	n := laneNote("failure")
	n.CoalesceKey = "k"
	r := inbox.NewRecord("r1", "", n, inbox.Decision{Action: inbox.ActionDeliver, DeliverAt: &now}, now)
	require.False(t, r.Mergeable(n))
	plain := n
	plain.NetKey, plain.State, plain.RestState = "", "", ""
	require.False(t, r.Mergeable(plain))
	require.Error(t, (&inbox.Notification{Thread: n.Thread, Source: "x", Kind: "y", State: "open"}).Validate(), "a state needs a lane")
}
