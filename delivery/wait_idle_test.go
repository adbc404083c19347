package delivery_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// A target whose runtime takes nothing into a running run (an A2A task) answers
// agent.ErrWaitIdle for a signal into one: the record is not failed, no attempt is
// counted and the target stays healthy; it waits for the thread to turn idle, then goes
// in full, waking it.
func TestWaitIdleHoldsTheRecordUntilTheRunEnds(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			held := 0
			env := deliverytest.New(t, deliverytest.Config{Backend: &b,
				Routes: func(stream delivery.Target) map[string]delivery.Route {
					return map[string]delivery.Route{"coder": {Kind: "a2a", FailureThreshold: 1,
						Target: delivery.TargetFunc(func(ctx context.Context, d agent.Handoff) (agent.Result, error) {
							if d.Behavior == agent.BehaviorDeliver {
								held++
								return agent.Result{}, fmt.Errorf("the task works: %w", agent.ErrWaitIdle)
							}
							return stream.Deliver(ctx, d)
						})}}
				}})
			ctx := context.Background()
			k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "t1"}
			note := func(summary string) string {
				return env.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: summary})
			}
			first := note("CI failed on main")
			env.Pass()
			require.Equal(t, inbox.StatusDelivered, env.Record(first).Status)
			run, err := env.Runs.Live(ctx, k)
			require.NoError(t, err)
			require.NotNil(t, run)

			second := note("deploy blocked")
			env.Pass()
			require.Equal(t, 1, held, "tried once, held")
			r := env.Record(second)
			require.Equal(t, inbox.StatusPending, r.Status)
			require.True(t, r.FullWhenIdle, "waits for the thread to turn idle")
			require.Zero(t, r.Attempts, "holding is not failing")
			require.Nil(t, r.NextAttemptAt)
			atts, err := env.Store.ListAttempts(ctx, delivery.AttemptFilter{Thread: &k})
			require.NoError(t, err)
			require.Len(t, atts, 1, "only the wake's attempt is logged")
			states, err := env.Store.TargetStates(ctx)
			require.NoError(t, err)
			for _, s := range states {
				require.Equal(t, delivery.TargetUp, s.State, "the target is not unwell for holding")
			}
			env.Pass()
			require.Equal(t, 1, held, "not tried again while the run is live")

			_, idle, err := env.Runs.Close(ctx, k, run.ID, agent.RunFinished, "")
			require.NoError(t, err)
			require.True(t, idle)
			env.Pass()
			require.Equal(t, inbox.StatusDelivered, env.Record(second).Status)
			log := env.Log(k)
			last := log[len(log)-1]
			require.Equal(t, agent.EventSignal, last.Event)
			require.Equal(t, agent.BehaviorWake, last.Behavior, "it wakes the idle thread")
			require.Equal(t, "deploy blocked", last.Signal.Contents)
		})
	}
}
