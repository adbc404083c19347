package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store/storetest"
)

// A thread keeps what it delivered (until retention) and a dispatch pass reads only what
// is due: the pass must find its thread's due records by an index of due records, never
// walk the thread's history (a cost per pass that grew with every record delivered). A
// down target's probe and the release of its backlog find the agent's due records by
// the same index.
func TestDueRecordReadsUseTheDueIndex(t *testing.T) {
	ctx := context.Background()
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			s := storetest.Open(t, be)
			now := time.Now()
			require.NoError(t, s.SeedDelivered(ctx, thread, 2000, now.Add(-time.Hour)))
			plans, err := s.DispatchPlans(ctx, thread, now)
			require.NoError(t, err)
			require.Len(t, plans, 3)
			for name, plan := range plans {
				require.NotContains(t, plan, "records_thread ", "%s walks the thread's records: %s", name, plan)
				require.NotContains(t, plan, "Seq Scan on records", "%s walks the records: %s", name, plan)
				if be.Name == "sqlite" {
					// No statistics: the planner takes the index made for these reads.
					// (PostgreSQL picks among the indexes of open records by its statistics.)
					require.Contains(t, plan, "records_thread_due", "%s: %s", name, plan)
				}
			}
		})
	}
}
