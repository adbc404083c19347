package store_test

import (
	"context"
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
