package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
)

func TestConsoleSessions(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store.DB) {
		sessions := store.NewConsoleSessions(s)
		ctx := context.Background()
		live := func(id string, at time.Time) bool {
			t.Helper()
			ok, err := sessions.ConsoleSessionLive(ctx, id, at)
			require.NoError(t, err)
			return ok
		}
		require.NoError(t, sessions.CreateConsoleSession(ctx, "browser-a", "ops", t0, t0.Add(time.Hour)))
		require.NoError(t, sessions.CreateConsoleSession(ctx, "browser-b", "ops", t0, t0.Add(time.Hour)))
		require.NoError(t, sessions.CreateConsoleSession(ctx, "browser-c", "viewer", t0, t0.Add(time.Hour)))
		require.True(t, live("browser-a", t0))
		require.False(t, live("browser-x", t0), "an id never signed in")
		require.False(t, live("browser-a", t0.Add(time.Hour)), "expired at its expiry")
		require.Error(t, sessions.CreateConsoleSession(ctx, "", "ops", t0, t0.Add(time.Hour)))

		// Sign-out ends one session; signing out twice is no error.
		require.NoError(t, sessions.DeleteConsoleSession(ctx, "browser-a"))
		require.NoError(t, sessions.DeleteConsoleSession(ctx, "browser-a"))
		require.False(t, live("browser-a", t0))
		require.True(t, live("browser-b", t0))

		// Sign out everywhere ends the token's sessions and only those.
		n, err := sessions.DeleteConsoleSessionsOf(ctx, "ops")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.False(t, live("browser-b", t0))
		require.True(t, live("browser-c", t0))

		// A sign-in sweeps the expired rows; the table never holds a session id.
		later := t0.Add(2 * time.Hour)
		require.NoError(t, sessions.CreateConsoleSession(ctx, "browser-d", "ops", later, later.Add(time.Hour)))
		var rows []struct {
			Hash  string `db:"id_hash"`
			Token string `db:"token"`
		}
		require.NoError(t, s.Reader().SelectContext(ctx, &rows, `SELECT id_hash, token FROM console_sessions`))
		require.Len(t, rows, 1, "browser-c expired and was swept")
		require.Equal(t, "ops", rows[0].Token)
		require.NotContains(t, rows[0].Hash, "browser-d")
		require.Len(t, rows[0].Hash, 64)
	})
}
