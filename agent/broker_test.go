package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func TestLocalBroker(t *testing.T) {
	b := NewLocalBroker()
	k := inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "t"}
	other := inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "u"}
	c1, cancel1 := b.Subscribe(k)
	c2, cancel2 := b.Subscribe(k)
	c3, cancel3 := b.Subscribe(other)
	defer cancel3()
	require.Equal(t, 2, b.Subscribers(k))

	// Publishing never blocks: tokens coalesce while a subscriber is busy.
	for range 5 {
		b.Publish(k)
	}
	require.Len(t, c1, 1)
	require.Len(t, c2, 1)
	require.Len(t, c3, 0)
	<-c1

	cancel1()
	cancel1()
	require.Equal(t, 1, b.Subscribers(k))
	b.Publish(k)
	require.Len(t, c1, 0, "unsubscribed")

	require.NoError(t, b.Stop(context.Background()))
	require.NoError(t, b.Stop(context.Background()))
	<-c2 // the token published before
	_, ok := <-c2
	require.False(t, ok, "closed at stop")
	cancel2()
	late, cancelLate := b.Subscribe(k)
	defer cancelLate()
	_, ok = <-late
	require.False(t, ok, "subscribing after stop gets a closed channel")
}
