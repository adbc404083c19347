package slack

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// A message names its thread (a root message is its own) and channel for watches, and
// happened at its ts.
func TestItemsWatchResourcesAndTime(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	items := func(inner map[string]any) (string, []string, time.Time) {
		t.Helper()
		its, err := h.handler.Items(context.Background(), &inbox.Event{Connector: "acme", Body: callback(t, "Ev1", inner)})
		require.NoError(t, err)
		require.Len(t, its, 1)
		return its[0].Fields.Channel, its[0].WatchResources, its[0].OccurredAt
	}
	_, res, at := items(messageEvent("C0001", "channel", "1700000000.000100", "root"))
	assert.Equal(t, []string{"C0001/1700000000.000100", "C0001"}, res)
	assert.Equal(t, time.Date(2023, 11, 14, 22, 13, 20, 100_000, time.UTC), at)

	reply := messageEvent("C0001", "channel", "1700000050.000200", "in the thread")
	reply["thread_ts"] = "1700000000.000100"
	_, res, _ = items(reply)
	assert.Equal(t, []string{"C0001/1700000000.000100", "C0001"}, res)
}

func TestTSTime(t *testing.T) {
	assert.Equal(t, time.Unix(1700000000, 1000).UTC(), tsTime("1700000000.000001"))
	assert.Equal(t, time.Unix(1700000000, 0).UTC(), tsTime("1700000000"))
	for _, bad := range []string{"", "x.1", "-5.1", "1.x", "1.1234567890"} {
		assert.True(t, tsTime(bad).IsZero(), bad)
	}
}
