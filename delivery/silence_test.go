package delivery_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
)

// A record decided before a silence began is held when it falls due, not sent; records
// arriving during the silence are held at ingest. When the silence is expired early, the
// next pass decides them again: the thread that accumulated several hears one summary,
// the thread with one its own notification; nothing is lost or sent twice.
func TestSilenceHoldsAndReleasesThroughPasses(t *testing.T) {
	forBackends(t, deliverytest.Config{Silences: true}, func(t *testing.T, e *deliverytest.Env) {
		ctx := context.Background()
		k, k2 := key("silenced"), key("silenced-too")
		early := create(t, e, k, comment("decided before the silence", inbox.PriorityHigh))
		first := e.Record(early.RecordID)
		require.NotNil(t, first.DueAt(), "due now")

		sil, err := e.Silences.Create(ctx, silence.Input{Matchers: []silence.Matcher{{Name: "agent", Value: "coder"}},
			EndsAt: e.Clock.Now().Add(2 * time.Hour), CreatedBy: "ops", Comment: "deploy"})
		require.NoError(t, err)
		e.Pass()
		require.Empty(t, signalsOf(e, k, 0), "held when it fell due")
		r := e.Record(early.RecordID)
		require.Equal(t, "silence:"+sil.ID, r.HeldBy)
		require.True(t, strings.HasPrefix(r.Reason, "silenced by "+sil.ID+"; "), r.Reason)
		require.Nil(t, r.DueAt())

		ids := []string{early.RecordID}
		for _, s := range []string{"second", "third"} {
			c := create(t, e, k, comment(s, inbox.PriorityHigh))
			require.Equal(t, "silence:"+sil.ID, e.Record(c.RecordID).HeldBy, "held at ingest")
			ids = append(ids, c.RecordID)
		}
		lone := create(t, e, k2, comment("alone", inbox.PriorityHigh))
		require.Equal(t, "silence:"+sil.ID, e.Record(lone.RecordID).HeldBy, "held at ingest")
		urgent := create(t, e, k2, comment("prod down", inbox.PriorityUrgent))
		require.Equal(t, "silence:"+sil.ID, e.Record(lone.RecordID).HeldBy, "still held")
		e.Clock.Advance(time.Hour)
		e.Pass()
		require.Empty(t, signalsOf(e, k, 0), "still silenced")
		require.Len(t, signalsOf(e, k2, 0), 1, "urgent passes the silence")
		require.Equal(t, inbox.StatusDelivered, e.Record(urgent.RecordID).Status)

		_, err = e.Silences.Expire(ctx, sil.ID, "ops")
		require.NoError(t, err)
		e.Pass()
		sigs := signalsOf(e, k, 0)
		require.Len(t, sigs, 1, "one summary for what the thread accumulated")
		require.Equal(t, agent.TagNotificationSummary, sigs[0].Signal.TagName)
		for _, id := range ids {
			r := e.Record(id)
			require.Empty(t, r.HeldBy)
			require.NotEmpty(t, r.SummarySignal, "listed in the summary")
		}
		sigs2 := signalsOf(e, k2, 0)
		require.Len(t, sigs2, 2, "the lone record goes on its own, as decided now (the urgent one's run is open: its summary first)")
		r = e.Record(lone.RecordID)
		require.Contains(t, r.Reason, "hold by silence:"+sil.ID+" ended")
		require.NotContains(t, r.Reason, "as one summary")

		e.Pass()
		require.Len(t, signalsOf(e, k, 0), 1, "nothing twice")
		require.Len(t, signalsOf(e, k2, 0), 2)
	})
}

// What a thread accumulated under a silence is one summary even past the records a pass
// reads in full (delivery.DefaultPerThread), not one summary per pass's worth.
func TestSilenceReleaseIsOneSummaryPastThePassLimit(t *testing.T) {
	forBackends(t, deliverytest.Config{Silences: true}, func(t *testing.T, e *deliverytest.Env) {
		ctx := context.Background()
		k := key("backlog")
		sil, err := e.Silences.Create(ctx, silence.Input{Matchers: []silence.Matcher{{Name: "thread", Value: k.Thread}},
			EndsAt: e.Clock.Now().Add(time.Hour), CreatedBy: "ops", Comment: "c"})
		require.NoError(t, err)
		const records = 250 // over the 200 a pass reads in full
		ns := make([]inbox.Notification, 0, 50)
		for i := range records {
			ns = append(ns, inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: fmt.Sprint("record ", i),
				Priority: inbox.PriorityHigh, Payload: []byte(`{"n":1}`)})
			if len(ns) == cap(ns) {
				_, err := e.Inbox.Ingest(ctx, &inbox.Event{Source: "github", Connector: "test"}, ns)
				require.NoError(t, err)
				ns = ns[:0]
			}
		}
		e.Pass()
		require.Empty(t, signalsOf(e, k, 0))
		_, err = e.Silences.Expire(ctx, sil.ID, "ops")
		require.NoError(t, err)
		e.Pass()
		sigs := signalsOf(e, k, 0)
		require.Len(t, sigs, 1)
		require.Equal(t, agent.TagNotificationSummary, sigs[0].Signal.TagName)
		require.Len(t, sigs[0].RecordIDs, records, "every record in the one summary")
		e.Clock.Advance(time.Hour)
		e.Pass()
		for _, f := range signalsOf(e, k, 0)[1:] {
			_, again := f.Signal.Metadata["recoveredFrom"]
			require.True(t, again, "nothing but the run's recovery: %s", f.Signal.TagName)
		}
		recs, err := store.NewRecords(e.Store).ThreadRecords(ctx, k)
		require.NoError(t, err)
		for _, r := range recs {
			require.Equal(t, sigs[0].Signal.ID, r.SummarySignal)
			require.NotEmpty(t, r.Payload, "the payload a summary did not need is still stored")
		}
	})
}
