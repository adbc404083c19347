package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// A notification's ifIdle.streamOptions are stored on its record and read back where
// the dispatcher reads its work; a merge that gives new ones replaces them, one that
// gives none keeps them.
func TestRecordStreamOptions(t *testing.T) {
	forEach(t, func(t *testing.T, s *store.DB, svc *inbox.Service) {
		reads := store.NewAdmin(s)
		ctx := context.Background()
		n := comment("one", "k", "")
		n.StreamOptions = map[string]any{"requestContext": map[string]any{"model": "mock-a"}, "maxSteps": float64(3)}
		id := ingest(t, svc, "d1", n).Records[0].RecordID
		r, err := reads.GetRecord(ctx, id)
		require.NoError(t, err)
		require.Equal(t, n.StreamOptions, r.StreamOptions)

		ws, err := store.NewQueue(s).ThreadsWork(ctx, []inbox.ThreadKey{thread}, t0, 10)
		require.NoError(t, err)
		require.Len(t, ws[0].Records, 1)
		require.Equal(t, n.StreamOptions, ws[0].Records[0].StreamOptions, "the dispatcher sees them")

		plain := comment("two", "k", "")
		require.True(t, ingest(t, svc, "d2", plain).Records[0].Merged)
		r, err = reads.GetRecord(ctx, id)
		require.NoError(t, err)
		require.Equal(t, n.StreamOptions, r.StreamOptions, "a merge without stream options keeps them")

		repl := comment("three", "k", "")
		repl.StreamOptions = map[string]any{"requestContext": map[string]any{"model": "mock-b"}}
		require.True(t, ingest(t, svc, "d3", repl).Records[0].Merged)
		r, err = reads.GetRecord(ctx, id)
		require.NoError(t, err)
		require.Equal(t, repl.StreamOptions, r.StreamOptions, "new ones win")

		other := ingest(t, svc, "d4", comment("none", "other", "")).Records[0].RecordID
		r, err = reads.GetRecord(ctx, other)
		require.NoError(t, err)
		require.Nil(t, r.StreamOptions)
	})
}
