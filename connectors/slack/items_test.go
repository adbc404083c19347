package slack

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// TestItemsReparseStoredEvent: a stored event parses back into the item the live
// request made, even while the live path would now skip the same message as already
// notified (a replay is deliberate).
func TestItemsReparseStoredEvent(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	rec := h.post(callback(t, "Ev1", appMention("C0001", "1700000000.000100", "<@U0BOT> deploy please")))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call := h.lastCall()
	require.Len(t, call.Notifications, 1)

	stored := call.Event
	items, err := h.handler.Items(context.Background(), &stored)
	require.NoError(t, err)
	require.Len(t, items, 1)
	it, n := items[0], call.Notifications[0]
	assert.Empty(t, it.Skip)
	assert.Equal(t, n.Kind, it.Kind)
	assert.Equal(t, n.Summary, it.Summary)
	assert.Equal(t, n.DedupeKey, it.DedupeKey)
	assert.Equal(t, n.Attributes, it.Attributes)
	assert.Equal(t, VerifiedBySignature, it.Metadata[connectors.MetaVerifiedBy])

	// The message event for the same text is skipped live, not on replay.
	rec = h.post(callback(t, "Ev2", messageEvent("C0001", "channel", "1700000000.000100", "<@U0BOT> deploy please")))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	msg := h.lastCall().Event
	items, err = h.handler.Items(context.Background(), &msg)
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Empty(t, items[0].Skip)
}

func TestItemsOutcomes(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	ctx := context.Background()
	_, err := h.handler.Items(ctx, &inbox.Event{Connector: "acme", Body: []byte(`{"type":"app_rate_limited","team_id":"T1"}`)})
	var nm *connectors.NotMapped
	require.ErrorAs(t, err, &nm)
	assert.Contains(t, nm.Reason, "rate-limiting")

	_, err = h.handler.Items(ctx, &inbox.Event{Connector: "acme", Body: []byte(`[]`)})
	require.Error(t, err)
	assert.NotErrorAs(t, err, &nm)
	assert.Contains(t, err.Error(), "decode envelope")

	_, err = h.handler.Items(ctx, &inbox.Event{Connector: "other", Body: []byte(`{}`)})
	assert.EqualError(t, err, `no slack connector named "other"`)
}
