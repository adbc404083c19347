package generic

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/stdwebhooks"
)

// A generic item is watched by its sourceId and netKey, and happened at the verified
// webhook-timestamp, live and on replay.
func TestItemsWatchResourcesAndTime(t *testing.T) {
	h := newHarness(t, 0)
	rec := h.post(t, "msg_1", `{"kind":"invoice-failed","summary":"Invoice 42 failed","sourceId":"invoice-42","netKey":"customer:acme","state":"failing"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	sent, err := strconv.ParseInt(call.Event.Headers["Webhook-Timestamp"], 10, 64)
	require.NoError(t, err, "the stored event keeps the verified timestamp")

	handler, err := NewHandler([]Config{{Name: "billing", Secret: testSecret}}, nil, slog.New(slog.DiscardHandler), func() time.Time { return testNow })
	require.NoError(t, err)
	items, err := handler.Items(context.Background(), &call.Event)
	require.NoError(t, err)
	assert.Equal(t, []string{"invoice-42", "customer:acme"}, items[0].WatchResources)
	assert.Equal(t, time.Unix(sent, 0).UTC(), items[0].OccurredAt)

	items, err = handler.Items(context.Background(), &inbox.Event{Connector: "billing", Body: []byte(`{"kind":"k"}`),
		Headers: map[string]string{stdwebhooks.HeaderTimestamp: "not a time"}})
	require.NoError(t, err)
	assert.True(t, items[0].OccurredAt.IsZero())
	assert.Empty(t, items[0].WatchResources)
}
