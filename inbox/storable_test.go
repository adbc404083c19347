package inbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// handedStore keeps what the service hands the store, as the store would write it.
type handedStore struct {
	ev Event
	ns []Notification
}

func (h *handedStore) Ingest(_ context.Context, ev *Event, ns []Notification, _ DecideFunc, _ func() string) (IngestResult, error) {
	h.ev, h.ns = *ev, ns
	return IngestResult{EventID: ev.ID}, nil
}

// The inbox, not the database, decides what is storable: whatever a connector or the API
// made of a hostile request, the store is handed clean text, hashed keys and valid JSON,
// and an event naming what no index takes is invalid before the store sees it.
func TestIngestHandsTheStoreWhatIsStorable(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{})
	require.NoError(t, err)
	h := &handedStore{}
	svc := NewService(h, p, WithClock(stillClock))
	long := strings.Repeat("k", MaxKeyBytes+1)
	n := Notification{Thread: ThreadKey{Agent: "coder", Resource: "re\x00po", Thread: "issue\xff1"}, Source: "github",
		Kind: "com\x00ment", Summary: "hi\x00 \xfe", DedupeKey: long, CoalesceKey: "c\x00",
		NetKey: long + "n", State: "op\x00en", Payload: json.RawMessage("{\"a\":\"\xff\"}")}
	ev := &Event{Source: "git\x00hub", Connector: "ac\xffme", Type: "push\x00", DeliveryID: long + "d"}
	_, err = svc.Ingest(context.Background(), ev, []Notification{n})
	require.NoError(t, err)

	require.Equal(t, "git\uFFFDhub", h.ev.Source)
	require.Equal(t, "ac\uFFFDme", h.ev.Connector)
	require.Equal(t, "push\uFFFD", h.ev.Type)
	require.Equal(t, HashKey(long+"d"), h.ev.DeliveryID)
	require.True(t, strings.HasPrefix(h.ev.DeliveryID, "sha256:"))
	require.Len(t, h.ns, 1)
	got := h.ns[0]
	require.Equal(t, ThreadKey{Agent: "coder", Resource: "re\uFFFDpo", Thread: "issue\uFFFD1"}, got.Thread)
	require.Equal(t, "com\uFFFDment", got.Kind)
	require.Equal(t, "hi\uFFFD \uFFFD", got.Summary)
	require.Equal(t, "op\uFFFDen", got.State)
	require.Equal(t, HashKey(long), got.DedupeKey)
	require.Equal(t, "c\uFFFD", got.CoalesceKey)
	require.Equal(t, HashKey(long+"n"), got.NetKey)
	require.JSONEq(t, `{"a":"\uFFFD"}`, string(got.Payload))
	require.Equal(t, got, n.Stored(), "lookups (explain) take a notification as ingest stores it")

	// A kind no index takes: the event is stored invalid, with no notifications.
	bad := n
	bad.Kind = strings.Repeat("x", MaxLabelBytes+1)
	ev = &Event{Source: "github", Connector: "acme", DeliveryID: "d2"}
	_, err = svc.Ingest(context.Background(), ev, []Notification{bad})
	require.NoError(t, err)
	require.Equal(t, EventInvalid, h.ev.Status)
	require.Contains(t, h.ev.Error, "notification 0: kind:")
	require.Empty(t, h.ns)
}
