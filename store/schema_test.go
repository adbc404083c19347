package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

func TestCurrent(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, b.Config, storetest.Logger(t))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			for range 2 { // the check leaves an unmigrated database as it is
				current, err := s.Current(ctx)
				require.NoError(t, err)
				require.False(t, current)
			}
			_, err = s.Migrate(ctx)
			require.NoError(t, err)
			current, err := s.Current(ctx)
			require.NoError(t, err)
			require.True(t, current)
		})
	}
}

// releasedSchema lists the migrations of the last release. A database at that release
// upgrades only if every newer migration is numbered above all of them: goose refuses
// a migration numbered below the database's version that it has not applied. Add a
// release's new versions here when it ships.
var releasedSchema = []int64{1, 2, 3, 4, 5, 7, 9, 11, 12, 14, 15, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

func TestUpgradeFromTheLastRelease(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, b.Config, storetest.Logger(t))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.NoError(t, s.MigrateOnly(ctx, func(v int64) bool { return slices.Contains(releasedSchema, v) }))
			_, err = s.Migrate(ctx)
			require.NoError(t, err, "a database of the last release upgrades")
			current, err := s.Current(ctx)
			require.NoError(t, err)
			require.True(t, current)
		})
	}
}
