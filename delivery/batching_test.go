package delivery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// signals is the signal frames of k's log.
func signals(e *deliverytest.Env, k inbox.ThreadKey) []agent.Frame {
	var out []agent.Frame
	for _, f := range e.Log(k) {
		if f.Event == agent.EventSignal {
			out = append(out, f)
		}
	}
	return out
}

// TestLowBurstMakesOneSummary: ten low events within a second make one summary frame,
// on an idle thread (persisted, no wake) and on an active one (into the running loop).
func TestLowBurstMakesOneSummary(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		for _, active := range []bool{false, true} {
			k := key(fmt.Sprint("low-burst-", active))
			runID := ""
			if active {
				runID = e.OpenRun(k).ID
			}
			for i := range 10 {
				create(t, e, k, comment(fmt.Sprint("push ", i), inbox.PriorityLow))
				e.Pass()
				e.Clock.Advance(100 * time.Millisecond)
			}
			require.Empty(t, signals(e, k), "batched, not one frame per event")
			e.Clock.Advance(inbox.DefaultSummaryInterval)
			e.Pass()
			got := signals(e, k)
			require.Len(t, got, 1, "one summary")
			require.Equal(t, `<notification-summary pending="10" priority="low">github: 10</notification-summary>`, got[0].XML)
			if active {
				require.Equal(t, agent.BehaviorDeliver, got[0].Behavior, "delivered into the running loop")
				require.Equal(t, runID, got[0].RunID)
			} else {
				require.Equal(t, agent.BehaviorPersist, got[0].Behavior, "persisted without waking")
				live, err := e.Runs.Live(t.Context(), k)
				require.NoError(t, err)
				require.Nil(t, live)
			}
			// The next low one waits for the next slot.
			create(t, e, k, comment("one more push", inbox.PriorityLow))
			e.Pass()
			require.Len(t, signals(e, k), 1)
			e.Clock.Advance(inbox.DefaultSummaryInterval)
			e.Pass()
			require.Len(t, signals(e, k), 2)
		}
	})
}

// TestSummaryThenFullWhenBothDue: a high record summarised for an active thread whose run
// ended before the summary went out has both its summary and its full notification due;
// the summary goes first (Mastra's order), the full one once the thread is idle again.
func TestSummaryThenFullWhenBothDue(t *testing.T) {
	forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
		k := key("both-due")
		run := e.OpenRun(k)
		rec := create(t, e, k, comment("Review requested", inbox.PriorityHigh))
		e.FinishRun(k, run.ID) // before any pass
		e.Pass()
		got := signals(e, k)
		require.Len(t, got, 1)
		require.Equal(t, agent.TagNotificationSummary, got[0].Signal.TagName, "summary first")
		require.Equal(t, inbox.StatusPending, e.Record(rec.RecordID).Status)
		live, err := e.Runs.Live(t.Context(), k)
		require.NoError(t, err)
		require.NotNil(t, live, "the summary of a high record woke the thread")
		e.FinishRun(k, live.ID)
		e.Pass()
		got = signals(e, k)
		require.Len(t, got, 2)
		require.Equal(t, fullXML(rec.RecordID, inbox.PriorityHigh, "Review requested"), got[1].XML)
		require.Equal(t, inbox.StatusDelivered, e.Record(rec.RecordID).Status)
	})
}

// TestDetailedSummaryThroughStream: with policy.summary_format: detailed, the same
// paced summary reaches the subscriber with the same tag and attributes, and
// contents naming the kinds and the most important item.
func TestDetailedSummaryThroughStream(t *testing.T) {
	cfg := deliverytest.Config{Policy: inbox.PolicyConfig{SummaryFormat: inbox.SummaryFormatDetailed}}
	forBackends(t, cfg, func(t *testing.T, e *deliverytest.Env) {
		k := key("detailed")
		ci := map[string]any{"source": "github", "kind": "ci-failure", "summary": "lint failed", "priority": "low",
			"attributes": map[string]any{"repo": "acme/api", "number": 7, "check": "lint"}}
		review := map[string]any{"source": "github", "kind": "review-requested", "summary": "review asked", "priority": "low",
			"attributes": map[string]any{"repo": "acme/api", "number": 9}}
		create(t, e, k, ci)
		create(t, e, k, review)
		e.Pass()
		require.Empty(t, signals(e, k))
		e.Clock.Advance(inbox.DefaultSummaryInterval)
		e.Pass()
		got := signals(e, k)
		require.Len(t, got, 1)
		require.Equal(t, `<notification-summary pending="2" priority="low">github: 2 (ci-failure on acme/api#7 "lint"; review-requested on acme/api#9)</notification-summary>`, got[0].XML)
	})
}
