package inbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A record whose summary went out waits in the inbox with nothing scheduled; a later
// duplicate the policy would discard must not discard it (nor the details it brings).
func TestMergeKeepsStrongerOutcome(t *testing.T) {
	n := Notification{Thread: ThreadKey{"a", "r", "t"}, Source: "github", Kind: "comment", Summary: "one", DedupeKey: "k"}
	summarize := Decision{Action: ActionSummarize, SummaryAt: at(0), Reason: "summary now, details stay in the inbox"}
	discard := Decision{Action: ActionDiscard, Reason: "rule[0] → discard"}

	r := NewRecord("r1", "e1", n, summarize, now)
	r.SummaryAt = nil // the dispatcher sent the summary; the details wait in the inbox
	n2 := n
	n2.Summary = "two"
	r.Merge(n2, discard, now.Add(time.Minute))
	require.Equal(t, StatusPending, r.Status, "a merge never discards a record still owed to the agent")
	require.Equal(t, ActionSummarize, r.Action)
	require.Equal(t, summarize.Reason, r.Reason)
	require.Equal(t, "two", r.Summary, "the merged details are kept")
	require.Equal(t, 2, r.CoalescedCount)
	require.Nil(t, r.DueAt())

	// Scheduled records keep their schedule and outcome too.
	r = NewRecord("r2", "e2", n, Decision{Action: ActionDefer, DeliverAt: at(time.Hour), Reason: "defer"}, now)
	r.Merge(n2, Decision{Action: ActionLog, DeliverAt: at(time.Minute), Reason: "log"}, now.Add(time.Minute))
	require.Equal(t, ActionDefer, r.Action, "defer (in full, later) is stronger than log")
	require.Equal(t, at(time.Minute), r.DeliverAt, "the earlier due time is kept")

	// A stronger new decision wins.
	r = NewRecord("r3", "e3", n, Decision{Action: ActionLog, DeliverAt: at(time.Hour), Reason: "log"}, now)
	r.Merge(n2, Decision{Action: ActionDeliver, DeliverAt: at(time.Minute), Reason: "deliver now"}, now.Add(time.Minute))
	require.Equal(t, ActionDeliver, r.Action)
	require.Equal(t, "deliver now", r.Reason)
	require.Equal(t, at(time.Minute), r.DeliverAt)
}

func TestActionStrengthOrder(t *testing.T) {
	order := []Action{ActionDiscard, ActionPersist, ActionLog, ActionSummarize, ActionDefer, ActionQueue, ActionDeliver}
	for i := 1; i < len(order); i++ {
		require.Less(t, order[i-1].Strength(), order[i].Strength(), "%s < %s", order[i-1], order[i])
	}
}

// A held record owes nothing until its hold ends, not even its full notification at
// the thread's idle turn (that would make it due, past the hold): new or merged into.
func TestHeldRecordDropsFullWhenIdle(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	hold := &Hold{By: "silence:s1", Until: now.Add(time.Hour), Reason: "silenced by s1"}
	n := Notification{Thread: ThreadKey{Agent: "a", Resource: "r", Thread: "t"}, Source: "github", Kind: "review", DedupeKey: "k"}
	queued := Decision{Action: ActionQueue, DeliverAt: &now, FullWhenIdle: true, Reason: "rule → queue"}

	r := NewRecord("r1", "e1", n, HeldDecision(queued, *hold), now)
	require.False(t, r.FullWhenIdle)
	require.Nil(t, r.DueAt())
	require.Equal(t, "silence:s1", r.HeldBy)

	r = NewRecord("r2", "e1", n, queued, now)
	require.True(t, r.FullWhenIdle)
	r.Merge(n, HeldDecision(queued, *hold), now)
	require.False(t, r.FullWhenIdle, "held by the merge")
	require.Nil(t, r.DueAt())
}
