package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// incompressible is n bytes of hex: PostgreSQL compresses a repetitive value enough to
// fit a B-tree entry, an attacker's random one it does not.
func incompressible(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestOverlongKeysStored: 6 KB delivery ids and dedupe/coalesce keys used to fail
// PostgreSQL's B-tree insert. They are stored hashed, and equal values stay equal.
func TestOverlongKeysStored(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		reads := store.NewAdmin(s)
		ctx := context.Background()
		delivery, dedupe, coalesce := incompressible(6000), incompressible(6000), incompressible(6000)
		first := ingest(t, svc, delivery, comment("first", dedupe, coalesce))
		require.False(t, first.Duplicate)
		ev, err := store.NewExplain(s).GetEvent(ctx, first.EventID)
		require.NoError(t, err)
		require.Equal(t, inbox.HashKey(delivery), ev.DeliveryID)
		require.True(t, strings.HasPrefix(ev.DeliveryID, "sha256:"))

		// The same long delivery id is a redelivery.
		again := ingest(t, svc, delivery, comment("first", dedupe, coalesce))
		require.True(t, again.Duplicate)
		require.Equal(t, first.EventID, again.EventID)

		// The same long keys merge; a different long key does not.
		require.True(t, ingest(t, svc, "d2", comment("second", dedupe, "")).Records[0].Merged)
		require.True(t, ingest(t, svc, "d3", comment("third", "", coalesce)).Records[0].Merged)
		require.False(t, ingest(t, svc, "d4", comment("other", incompressible(6000), "")).Records[0].Merged)
		r, err := reads.GetRecord(ctx, first.Records[0].RecordID)
		require.NoError(t, err)
		require.Equal(t, 3, r.CoalescedCount)
		require.Equal(t, inbox.HashKey(dedupe), r.DedupeKey)
		require.Equal(t, inbox.HashKey(coalesce), r.CoalesceKey)

		// Short keys are kept as they are.
		short := strings.Repeat("k", inbox.MaxKeyBytes)
		res := ingest(t, svc, "d5", comment("short", short, ""))
		r, err = reads.GetRecord(ctx, res.Records[0].RecordID)
		require.NoError(t, err)
		require.Equal(t, short, r.DedupeKey)
	})
}

// TestUnindexableNotificationStoredInvalid: a thread id, kind or source too long to
// index makes the event invalid (stored, no records) rather than an error that a
// connector would retry forever.
func TestUnindexableNotificationStoredInvalid(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		ctx := context.Background()
		for i, mut := range []func(n *inbox.Notification){
			func(n *inbox.Notification) { n.Thread.Thread = incompressible(6000) },
			func(n *inbox.Notification) { n.Thread.Resource = incompressible(6000) },
			func(n *inbox.Notification) { n.Kind = incompressible(6000) },
			func(n *inbox.Notification) { n.Source = incompressible(6000) },
		} {
			n := comment("x", "k", "")
			mut(&n)
			ev := event("bad-" + string(rune('a'+i)))
			res, err := svc.Ingest(ctx, ev, []inbox.Notification{n})
			require.NoError(t, err)
			require.Empty(t, res.Records)
			require.Equal(t, inbox.EventInvalid, ev.Status)
			stored, err := explain.GetEvent(ctx, res.EventID)
			require.NoError(t, err)
			require.Equal(t, inbox.EventInvalid, stored.Status)
			require.Contains(t, stored.Error, "over the limit")
			require.Less(t, len(stored.Error), 500, "the error names the field, not the value")
		}
		// An event source too long to index is cut and the event is invalid.
		ev := &inbox.Event{Source: incompressible(6000), Connector: "coder", DeliveryID: "d", Type: "notification"}
		res, err := svc.Ingest(ctx, ev, nil)
		require.NoError(t, err)
		stored, err := explain.GetEvent(ctx, res.EventID)
		require.NoError(t, err)
		require.Equal(t, inbox.EventInvalid, stored.Status)
		require.Len(t, stored.Source, inbox.MaxLabelBytes)
		// The thread's next event goes in.
		require.Len(t, ingest(t, svc, "next", comment("next", "k", "")).Records, 1)
	})
}

// TestHostilePayloadStored: invalid UTF-8 in a payload and NUL in an event's source used
// to be rejected by PostgreSQL (a permanent 500) and read back as invalid JSON from
// SQLite. Payloads stay valid JSON; every text field is cleaned.
func TestHostilePayloadStored(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		ctx := context.Background()
		n := comment("ok", "k", "")
		n.Source = "git\x00hub"
		n.Route = "r\xff"
		n.Payload = json.RawMessage("{\"note\":\"bad \xff byte\",\"nul\":\"a\\u0000b\"}")
		n.Metadata = map[string]any{"x\xff": "y\x00"}
		n.Attributes = inbox.Attributes{{Key: "a\xff", Value: "b\xff"}}
		ev := event("d\xff")
		ev.Source, ev.Connector, ev.Type, ev.Error = "git\x00hub", "acme\xff", "t\x00", "e\xff"
		ev.Headers = map[string]string{"X-\xff": "\x00"}
		res, err := svc.Ingest(ctx, ev, []inbox.Notification{n})
		require.NoError(t, err)
		r, err := store.NewAdmin(s).GetRecord(ctx, res.Records[0].RecordID)
		require.NoError(t, err)
		require.True(t, json.Valid(r.Payload))
		require.JSONEq(t, `{"note":"bad \ufffd byte","nul":"a\u0000b"}`, string(r.Payload))
		require.Equal(t, "git\ufffdhub", r.Source)
		require.Equal(t, "r\ufffd", r.Route)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		require.True(t, json.Valid(out))
		stored, err := store.NewExplain(s).GetEvent(ctx, res.EventID)
		require.NoError(t, err)
		require.Equal(t, "git\ufffdhub", stored.Source)
		require.Equal(t, "acme\ufffd", stored.Connector)
		require.Equal(t, "t\ufffd", stored.Type)
		// The same dirty delivery id is still a redelivery.
		dup := event("d\xff")
		dup.Source, dup.Connector = "git\x00hub", "acme\xff"
		again, err := svc.Ingest(ctx, dup, nil)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
	})
}
