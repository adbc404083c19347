package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// slowReads is a loaded machine: reading a pass's work takes longer than half the lease,
// so every claim has aged before its first send.
type slowReads struct {
	delivery.Queue
	clock *deliverytest.Clock
	by    time.Duration
}

func (q *slowReads) ThreadsWork(ctx context.Context, keys []inbox.ThreadKey, now time.Time, limit int) ([]delivery.Work, error) {
	q.clock.Advance(q.by)
	return q.Queue.ThreadsWork(ctx, keys, now, limit)
}

// A pass whose claim aged while it read its work renews the lease and still sends:
// otherwise every pass postpones the same records again and none ever goes out.
func TestAgedClaimStillDelivers(t *testing.T) {
	rec := &recorder{}
	var q *slowReads
	e := deliverytest.New(t, deliverytest.Config{
		Routes: recordingRoutes(rec),
		Queue: func(s *store.DB) delivery.Queue {
			q = &slowReads{Queue: store.NewQueue(s), by: delivery.DefaultLease * 3 / 4}
			return q
		},
	})
	q.clock = e.Clock
	var ids []string
	for th := range 3 {
		ids = append(ids, e.Ingest(inbox.Notification{Thread: key(fmt.Sprint("t", th)), Source: "github", Kind: "ci",
			Summary: fmt.Sprint("failed ", th), Priority: inbox.PriorityUrgent}))
	}
	for range 3 {
		_, err := e.Dispatcher.RunOnce(t.Context())
		require.NoError(t, err)
	}
	for _, id := range ids {
		require.Equal(t, inbox.StatusDelivered, e.Record(id).Status, "record %s", id)
	}
	require.Len(t, rec.ids, 3)
}
