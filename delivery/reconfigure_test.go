package delivery_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// tapTarget delivers through next and remembers the threads it was asked for; gate, when
// set, holds each delivery until released.
type tapTarget struct {
	next    delivery.Target
	entered chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	threads []string
}

func (r *tapTarget) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	r.mu.Lock()
	r.threads = append(r.threads, d.Thread.Thread)
	r.mu.Unlock()
	if r.gate != nil {
		r.entered <- struct{}{}
		<-r.gate
	}
	return r.next.Deliver(ctx, d)
}

func (r *tapTarget) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.threads...)
}

// A reconfigure (a config reload) while a send is in flight: the send finishes on the
// target it began with and its record is delivered, and the next pass sends through the
// new route.
func TestReconfigureKeepsSendsInFlight(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { reconfigureKeepsSendsInFlight(t, b) })
	}
}

func reconfigureKeepsSendsInFlight(t *testing.T, b storetest.Backend) {
	var old, fresh *tapTarget
	env := deliverytest.New(t, deliverytest.Config{
		Backend: &b,
		Routes: func(stream delivery.Target) map[string]delivery.Route {
			old = &tapTarget{next: stream, entered: make(chan struct{}, 1), gate: make(chan struct{})}
			fresh = &tapTarget{next: stream}
			return map[string]delivery.Route{"coder": {Kind: agent.TargetStream, Target: old, Concurrency: 1}}
		},
	})
	note := func(thread string) string {
		return env.Ingest(inbox.Notification{Thread: inbox.ThreadKey{Agent: "coder", Resource: "r", Thread: thread},
			Source: "github", Kind: "ci-failure", Priority: inbox.PriorityUrgent, Summary: thread})
	}
	first := note("a")
	done := make(chan error, 1)
	go func() {
		_, err := env.Dispatcher.RunOnce(context.Background())
		done <- err
	}()
	<-old.entered // the send to the old target is in flight

	env.Dispatcher.Reconfigure(delivery.Live{Routes: map[string]delivery.Route{
		"coder": {Kind: agent.TargetStream, Target: fresh, Concurrency: 1}}})
	second := note("b")
	close(old.gate)
	require.NoError(t, <-done)
	require.Equal(t, inbox.StatusDelivered, env.Record(first).Status, "the send in flight was not lost")

	env.Pass()
	require.Equal(t, inbox.StatusDelivered, env.Record(second).Status)
	require.Equal(t, []string{"a"}, old.seen(), "the old target got only the send that began before")
	require.Equal(t, []string{"b"}, fresh.seen(), "the next pass used the new route")
}
