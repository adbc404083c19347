package delivery_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/attempt"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

type countingObserver struct {
	mu       sync.Mutex
	attempts []string
	signals  []string
}

func (o *countingObserver) DeliveryAttempt(target, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts = append(o.attempts, target+":"+outcome)
}

func (o *countingObserver) SignalSent(target, action string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.signals = append(o.signals, target+":"+action)
}

// TestObserverSeesCommittedOutcomes: metrics count what was committed, per target
// kind: a failed attempt, then the retried success and the signal it carried.
func TestObserverSeesCommittedOutcomes(t *testing.T) {
	obs := &countingObserver{}
	fail := true
	target := delivery.TargetFunc(func(context.Context, agent.Handoff) (agent.Result, error) {
		if fail {
			fail = false
			return agent.Result{}, &agent.DeliveryError{Err: errors.New("receiver down"), Retry: true}
		}
		return agent.Result{}, nil
	})
	e := deliverytest.New(t, deliverytest.Config{
		Routes: func(delivery.Target) map[string]delivery.Route {
			return map[string]delivery.Route{"coder": {Kind: "webhook", Target: target}}
		},
		Dispatch: []delivery.Option{delivery.WithObserver(obs)},
	})
	e.Ingest(inbox.Notification{Thread: key("obs"), Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: "CI failed"})
	e.Pass()
	require.Equal(t, []string{"webhook:retry"}, obs.attempts)
	require.Empty(t, obs.signals)
	e.Clock.Advance(attempt.BackoffCap)
	e.Pass()
	require.Equal(t, []string{"webhook:retry", "webhook:delivered"}, obs.attempts)
	require.Equal(t, []string{"webhook:wake"}, obs.signals)
}
