package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// A sender may fill one lane with as many records as it likes; the lane's queries must
// find the pending record and the newest one by an index, never by walking the lane.
func TestLaneQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s := openPlanStore(t)
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

// A thread may hold any number of pending records of one source and kind (low ones stay
// pending until seen); finding the one a new notification merges into must search by
// its keys, never read the family's records one by one.
func TestMergeLookupUsesTheKeyIndexes(t *testing.T) {
	ctx := context.Background()
	s := openPlanStore(t)
	for _, keys := range []struct{ dedupe, coalesce string }{{"d", ""}, {"", "c"}, {"d", "c"}} {
		n := inbox.Notification{Thread: inbox.ThreadKey{Agent: "a", Resource: "r", Thread: "t"}, Source: "s", Kind: "k",
			DedupeKey: keys.dedupe, CoalesceKey: keys.coalesce}
		var rows []struct {
			ID     int    `db:"id"`
			Parent int    `db:"parent"`
			NotUse int    `db:"notused"`
			Detail string `db:"detail"`
		}
		q := mergeQuery(keys.dedupe != "", keys.coalesce != "")
		require.NoError(t, s.r.SelectContext(ctx, &rows, `EXPLAIN QUERY PLAN `+q, mergeArgs(n)...))
		searches := 0
		for _, r := range rows {
			if strings.HasPrefix(r.Detail, "SCAN by_") {
				// a one-row lookup's result
				continue
			}
			if !strings.HasPrefix(r.Detail, "SEARCH") && !strings.HasPrefix(r.Detail, "SCAN") {
				continue
			}
			searches++
			require.Regexp(t, `^SEARCH records USING INDEX records_merge_(dedupe|coalesce) \(.*(dedupe|coalesce)_key=\?\)$`, r.Detail,
				"keys %+v: every lookup goes by a key", keys)
		}
		require.Equal(t, max(1, len(mergeArgs(n))/6), searches, "keys %+v: one lookup per key", keys)
	}
}

// openPlanStore opens a migrated SQLite store whose plans the tests read.
func openPlanStore(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Config{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "plan.db")}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	return s
}
