package store_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// storedBody is events.body and body_encoding as the database holds them.
func storedBody(t *testing.T, s *store.DB, id string) ([]byte, string) {
	t.Helper()
	var row struct {
		Body []byte `db:"body"`
		Enc  string `db:"body_encoding"`
	}
	require.NoError(t, s.Writer().Get(&row, s.Writer().Rebind(`SELECT body, body_encoding FROM events WHERE id = ?`), id))
	return row.Body, row.Enc
}

// TestBodyStoredCompressed: a GitHub body takes a fraction of its size in the database
// and reads back (what replay, explain and the admin API get) byte for byte; the
// digest that finds a replayed body is the raw body's.
func TestBodyStoredCompressed(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		ctx := context.Background()
		bodies := octokitBodies(t)
		var raw, stored int
		for i, body := range bodies[:40] {
			ev := event(string(rune('a'+i%26)) + string(rune('a'+i/26)))
			ev.Body, ev.BodyDigest = body, inbox.Digest(body)
			res, err := svc.Ingest(ctx, ev, nil)
			require.NoError(t, err)
			got, err := store.NewExplain(s).GetEvent(ctx, res.EventID)
			require.NoError(t, err)
			require.True(t, bytes.Equal(body, got.Body), "body %d reads back changed", i)
			b, _ := storedBody(t, s, res.EventID)
			raw, stored = raw+len(body), stored+len(b)
		}
		require.Less(t, stored, raw/3, "bodies are stored compressed")

		// The same body under another delivery id is still found by its raw digest.
		again := event("replayed")
		again.Body, again.BodyDigest = bodies[0], inbox.Digest(bodies[0])
		res, err := svc.Ingest(ctx, again, nil)
		require.NoError(t, err)
		require.True(t, res.Duplicate)
	})
}

// TestBodyUncompressedRowReads: rows written before compression (no encoding) read as
// they are, and so does a body that compression would not shrink, even one that
// starts with zstd's magic number.
func TestBodyUncompressedRowReads(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		explain := store.NewExplain(s)
		ctx := context.Background()
		res := ingest(t, svc, "old")
		legacy := []byte(`{"action":"created","comment":{"body":"written before compression"}}`)
		_, err := s.Writer().Exec(s.Writer().Rebind(`UPDATE events SET body = ?, body_encoding = '' WHERE id = ?`), legacy, res.EventID)
		require.NoError(t, err)
		got, err := explain.GetEvent(ctx, res.EventID)
		require.NoError(t, err)
		require.Equal(t, legacy, got.Body)

		magic := append([]byte{0x28, 0xb5, 0x2f, 0xfd}, incompressible(64)...)
		ev := event("magic")
		ev.Body = magic
		res2, err := svc.Ingest(ctx, ev, nil)
		require.NoError(t, err)
		got, err = explain.GetEvent(ctx, res2.EventID)
		require.NoError(t, err)
		require.Equal(t, magic, got.Body)
		_, enc := storedBody(t, s, res2.EventID)
		require.Empty(t, enc, "a body compression does not shrink is kept as it is")
	})
}

// TestBodyBombRefused plays an attacker who wrote a crafted row: 64 MiB of zeros
// compressed to a few KB, read by a store whose body limit is 1 MiB. The read fails
// with an error instead of allocating the 64 MiB.
func TestBodyBombRefused(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	bomb := enc.EncodeAll(make([]byte, 64<<20), nil)
	require.NoError(t, enc.Close())
	require.Less(t, len(bomb), 64<<10)
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b, store.WithBodyLimit(1<<20))
			explain := store.NewExplain(s)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			require.NoError(t, err)
			res, err := inbox.NewService(store.NewInbox(s), pol).Ingest(ctx, event("bomb"), nil)
			require.NoError(t, err)
			_, err = s.Writer().Exec(s.Writer().Rebind(`UPDATE events SET body = ?, body_encoding = 'zstd' WHERE id = ?`), bomb, res.EventID)
			require.NoError(t, err)

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = explain.GetEvent(ctx, res.EventID)
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, "larger than the body limit")
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "the read allocated the bomb")

			// A row that is not zstd at all, or names an unknown encoding, errors too.
			_, err = s.Writer().Exec(s.Writer().Rebind(`UPDATE events SET body = ?, body_encoding = 'zstd' WHERE id = ?`), []byte("not zstd"), res.EventID)
			require.NoError(t, err)
			_, err = explain.GetEvent(ctx, res.EventID)
			require.ErrorContains(t, err, "decompress body")
			_, err = s.Writer().Exec(s.Writer().Rebind(`UPDATE events SET body_encoding = 'brotli' WHERE id = ?`), res.EventID)
			require.NoError(t, err)
			_, err = explain.GetEvent(ctx, res.EventID)
			require.ErrorContains(t, err, "unknown body encoding")
		})
	}
}
