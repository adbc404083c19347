package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// TestBodyDigestDedupe plays a replay attacker: a captured signed GitHub body sent
// again under a new delivery id is a redelivery of the first event, until retention
// deletes that event (and its digest with it).
func TestBodyDigestDedupe(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		ctx := context.Background()
		body := []byte(`{"action":"created","comment":{"id":1,"body":"ship it"}}`)
		ev := func(delivery string, at time.Time) *inbox.Event {
			e := event(delivery)
			e.Body, e.BodyDigest, e.ReceivedAt = body, inbox.Digest(body), at
			return e
		}
		first, err := svc.Ingest(ctx, ev("d1", t0), []inbox.Notification{comment("Jane commented", "k1", "")})
		require.NoError(t, err)
		require.False(t, first.Duplicate)

		for _, delivery := range []string{"d2-forged", "", "d1"} {
			again, err := svc.Ingest(ctx, ev(delivery, t0.Add(time.Minute)), []inbox.Notification{comment("Jane commented", "k1", "")})
			require.NoError(t, err, delivery)
			assert.True(t, again.Duplicate, "delivery %q", delivery)
			assert.Equal(t, first.EventID, again.EventID)
			assert.Empty(t, again.Records, "nothing changes")
		}
		stored, err := store.NewExplain(s).GetEvent(ctx, first.EventID)
		require.NoError(t, err)
		assert.Equal(t, 3, stored.Redeliveries)

		// Another connector, or a different body, is not a duplicate.
		other := ev("d3", t0)
		other.Connector = "other"
		res, err := svc.Ingest(ctx, other, nil)
		require.NoError(t, err)
		assert.False(t, res.Duplicate)
		changed := ev("d4", t0)
		changed.Body = []byte(`{"action":"deleted"}`)
		changed.BodyDigest = inbox.Digest(changed.Body)
		res, err = svc.Ingest(ctx, changed, nil)
		require.NoError(t, err)
		assert.False(t, res.Duplicate)

		// Retention deletes the event and so the digest: the key is bounded in time.
		_, ok, err := store.NewRecords(s).TransitionRecord(ctx, thread, first.Records[0].RecordID, inbox.StatusDismissed,
			[]inbox.Status{inbox.StatusPending}, t0.Add(time.Minute))
		require.NoError(t, err)
		require.True(t, ok)
		n, err := store.NewRetention(s).DeleteEventsBefore(ctx, t0.Add(time.Hour), 100)
		require.NoError(t, err)
		require.EqualValues(t, 3, n)
		res, err = svc.Ingest(ctx, ev("d5", t0.Add(2*time.Hour)), nil)
		require.NoError(t, err)
		assert.False(t, res.Duplicate, "the digest left with its event")
	})
}
