package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sender may fill one lane with as many records as it likes; the lane's queries must
// find the pending record and the newest one by an index, never by walking the lane.
func TestLaneQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "plan.db")}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	for q, index := range map[string]string{qLanePending: "records_net_pending", qLaneHead: "records_net"} {
		var rows []struct {
			ID     int    `db:"id"`
			Parent int    `db:"parent"`
			NotUse int    `db:"notused"`
			Detail string `db:"detail"`
		}
		require.NoError(t, s.r.SelectContext(ctx, &rows, `EXPLAIN QUERY PLAN `+q, "a", "r", "t", "k"))
		var plan []string
		for _, r := range rows {
			plan = append(plan, r.Detail)
		}
		joined := strings.Join(plan, "; ")
		require.Contains(t, joined, "USING INDEX "+index, joined)
		require.NotContains(t, joined, "TEMP B-TREE", "no sort over the lane: %s", joined)
	}
}
