package generic

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

func TestItemsReparseStoredEvent(t *testing.T) {
	h := newHarness(t, 0)
	rec := h.post(t, "msg_1", `{"kind":"invoice-failed","summary":"Invoice 42 failed","priority":"high","attributes":{"customer":"acme"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()

	handler, err := NewHandler([]Config{{Name: "billing", Secret: testSecret}}, nil, slog.New(slog.DiscardHandler), func() time.Time { return testNow })
	require.NoError(t, err)
	stored := call.Event
	items, err := handler.Items(context.Background(), &stored)
	require.NoError(t, err)
	require.Len(t, items, 1)
	it := items[0]
	n := call.Notifications[0]
	assert.Equal(t, n.Kind, it.Kind)
	assert.Equal(t, n.Summary, it.Summary)
	assert.Equal(t, n.Priority, it.Priority)
	assert.Equal(t, n.Attributes, it.Attributes)
	assert.Equal(t, n.Metadata, it.Metadata)
	assert.Equal(t, "acme", it.Fields.Extra["customer"])

	_, err = handler.Items(context.Background(), &inbox.Event{Connector: "billing", Body: []byte(`[1]`)})
	assert.EqualError(t, err, "body: want a JSON object")
	_, err = handler.Items(context.Background(), &inbox.Event{Connector: "other", Body: []byte(`{}`)})
	assert.EqualError(t, err, `no generic connector named "other"`)
	var nm *connectors.NotMapped
	assert.NotErrorAs(t, err, &nm)
}

// A native body may put its notification in a net-state lane; a state needs the lane.
func TestNativeBodyNetState(t *testing.T) {
	h := newHarness(t, 0)
	rec := h.post(t, "msg_1", `{"kind":"invoice-status","summary":"Invoice 42 is overdue","netKey":"invoice:42","state":"overdue","restState":"paid"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.ing.Last()
	require.Len(t, call.Notifications, 1)
	n := call.Notifications[0]
	assert.Equal(t, "invoice:42", n.NetKey)
	assert.Equal(t, "overdue", n.State)
	assert.Equal(t, "paid", n.RestState)

	assert.Contains(t, h.invalid(t, "msg_2", `{"kind":"invoice-status","state":"overdue"}`), "state, restState: need a netKey")
}
