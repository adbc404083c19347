package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// A thread whose decision waits for a wake slot is a waiter like one with records: it
// keeps its row while the decision is undelivered (other waiters queuing do not drop
// it), QueuedApprovals lists such decisions in the queue's order, and once its signal
// is logged, or the decision is older than approval.DeliverFor, it holds no place.
func TestApprovalWaitersKeepTheirPlace(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, _ *inbox.Service) {
		approvals := store.NewApprovals(s)
		ctx := context.Background()
		key := func(name string) inbox.ThreadKey {
			return inbox.ThreadKey{Agent: thread.Agent, Resource: thread.Resource, Thread: name}
		}
		wake := func(name string, since time.Time) agent.WakeOutcome {
			t.Helper()
			now := t0.Add(time.Hour)
			res, err := store.NewRuns(s).WakeRun(ctx, agent.Run{ID: "run-" + name, Thread: key(name), Status: agent.RunOpen, Origin: agent.OriginWake,
				OpenedAt: now, LeaseUntil: now.Add(time.Hour)}, agent.WakeRequest{Exempt: true, Limit: 1,
				Rank: inbox.PriorityUrgent.Rank(), Since: since})
			require.NoError(t, err)
			return res.Outcome
		}
		queued := func(name string) bool {
			t.Helper()
			st, err := store.NewExplain(s).WakeState(ctx, key(name), t0.Add(time.Hour))
			require.NoError(t, err)
			return st.QueuedAt != nil
		}
		decide := func(id, name string, at time.Time) {
			t.Helper()
			a := newApproval(id, "call-"+id, at)
			a.Origin, a.ThreadKey = approval.OriginAPI, key(name)
			_, _, err := approvals.CreateApproval(ctx, a)
			require.NoError(t, err)
			_, changed, err := approvals.DecideApproval(ctx, id, approval.StatusApproved, "U1", "Jane", at)
			require.NoError(t, err)
			require.True(t, changed)
		}

		require.Equal(t, agent.WakeOpened, wake("busy", t0))
		decide("late", "late", t0.Add(2*time.Minute))
		decide("early", "early", t0.Add(time.Minute))
		require.Equal(t, agent.WakeQueued, wake("late", t0.Add(2*time.Minute)))
		require.Equal(t, agent.WakeQueued, wake("early", t0.Add(time.Minute)))
		require.Equal(t, agent.WakeQueued, wake("nothing", t0), "a waiter with nothing waiting")
		require.Equal(t, agent.WakeQueued, wake("other", t0.Add(3*time.Minute)))
		require.True(t, queued("early"))
		require.True(t, queued("late"))
		require.False(t, queued("nothing"), "a waiter with neither records nor a decision holds no place")

		got, err := approvals.QueuedApprovals(ctx, thread.Agent, t0, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"early", "late"}, ids(got), "in the queue's order")
		got, err = approvals.QueuedApprovals(ctx, thread.Agent, t0.Add(90*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, []string{"late"}, ids(got), "a decision older than the bound is given up")
		got, err = approvals.QueuedApprovals(ctx, "support", t0, 10)
		require.NoError(t, err)
		require.Empty(t, got, "another agent's queue")

		_, _, err = store.NewFrames(s).AppendFrame(ctx, signalFrame(approval.SignalPrefix+"late", key("late"), t0.Add(3*time.Minute)))
		require.NoError(t, err)
		got, err = approvals.QueuedApprovals(ctx, thread.Agent, t0, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"early"}, ids(got))
		require.Equal(t, agent.WakeQueued, wake("other", t0.Add(3*time.Minute)))
		require.False(t, queued("late"), "delivered: no longer a waiter")
		require.True(t, queued("early"))
	})
}
