package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
)

// SeedDelivered inserts n delivered records on k in one transaction (a thread's history,
// as retention keeps it) and refreshes PostgreSQL's statistics, as autovacuum would.
func (s *DB) SeedDelivered(ctx context.Context, k inbox.ThreadKey, n int, at time.Time) error {
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		for i := range n {
			r := inbox.Record{ID: fmt.Sprintf("seed%06d", i), Thread: k, Source: "github", Kind: "comment",
				Priority: inbox.PriorityMedium, Summary: "delivered", Status: inbox.StatusDelivered, Action: inbox.ActionDeliver,
				Attributes: inbox.Attributes{}, CoalescedCount: 1, CreatedAt: at, UpdatedAt: at, DeliveredAt: &at}
			if err := s.insertRecord(ctx, tx, &r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed delivered records: %w", err)
	}
	if s.driver == DriverPostgres {
		_, err = s.w.ExecContext(ctx, `ANALYZE records`)
	}
	return err
}

// DispatchPlans are the query plans of the reads that find a thread's or an agent's due
// records: a dispatch pass's work, a down target's probe and its backlog's release.
func (s *DB) DispatchPlans(ctx context.Context, k inbox.ThreadKey, now time.Time) (map[string]string, error) {
	t := micros(now)
	return s.explainAll(ctx, map[string]planQuery{
		"work":    {workRecordsQuery(1), []any{k.Agent, k.Resource, k.Thread, 50, t, 50, 100, t, t}},
		"probe":   {(&Targets{s.core}).probeThreadQuery(), []any{"owner", t, k.Agent, t, t}},
		"release": {qReleaseBacklog, []any{t, k.Agent, t, t, t}},
	})
}
