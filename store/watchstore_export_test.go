package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/watch"
)

// SeedWatches inserts live watches many rows a statement, without CreateWatch's checks:
// the scale tests' fixture.
func (s *DB) SeedWatches(ctx context.Context, ws []watch.Watch) error {
	const perStmt, perTx = 500, 10_000
	for len(ws) > 0 {
		tx := ws[:min(len(ws), perTx)]
		ws = ws[len(tx):]
		err := s.inTx(ctx, func(ctx context.Context, sqlTx *sqlx.Tx) error {
			for part := range chunks(tx, perStmt) {
				var rows []string
				var args []any
				for _, w := range part {
					kinds, _ := json.Marshal(w.Kinds)
					rows = append(rows, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
					args = append(args, w.ID, w.Thread.Agent, w.Thread.Resource, w.Thread.Thread, w.Source, w.Connector,
						w.Resource, w.Key(), string(kinds), string(w.Priority), micros(w.CreatedAt), micros(w.ExpiresAt))
				}
				if _, err := sqlTx.ExecContext(ctx, s.q(`INSERT INTO watches (id, agent, resource_id, thread_id, source,
					connector, resource, match_key, kinds, priority, created_at, expires_at) VALUES `+strings.Join(rows, ", ")), args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed watches: %w", err)
		}
	}
	if s.driver == DriverPostgres {
		_, err := s.w.ExecContext(ctx, `ANALYZE watches`)
		return err
	}
	_, err := s.w.ExecContext(ctx, `ANALYZE`)
	return err
}

func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			part := s[:min(len(s), n)]
			s = s[len(part):]
			if !yield(part) {
				return
			}
		}
	}
}

// WatchPlans are the query plans of the watch lookups the gateway makes per event, per
// sweep and per create, one string each.
func (s *DB) WatchPlans(ctx context.Context, keys []string) (map[string]string, error) {
	live, liveArgs, err := (&Watches{s.core}).liveWatchesQuery(keys)
	if err != nil {
		return nil, err
	}
	return s.explainAll(ctx, map[string]planQuery{
		"live":  {live, liveArgs},
		"due":   {qDueWatches, []any{int64(0), 100}},
		"count": {`SELECT COUNT(*) FROM watches WHERE agent = ? AND ended_at IS NULL`, []any{"agent7"}},
	})
}

// planQuery is a statement and its arguments, whose plan a test reads.
type planQuery struct {
	q    string
	args []any
}

// explainAll is the plan of each of queries, by name.
func (s *core) explainAll(ctx context.Context, queries map[string]planQuery) (map[string]string, error) {
	out := map[string]string{}
	for name, q := range queries {
		plan, err := s.explain(ctx, q.q, q.args...)
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", name, err)
		}
		out[name] = plan
	}
	return out, nil
}

// explain is q's query plan on the read pool, one line per step.
func (s *core) explain(ctx context.Context, q string, args ...any) (string, error) {
	var lines []string
	if s.driver == DriverPostgres {
		if err := s.r.SelectContext(ctx, &lines, `EXPLAIN `+s.q(q), args...); err != nil {
			return "", err
		}
		return strings.Join(lines, "\n"), nil
	}
	var rows []struct {
		ID     int    `db:"id"`
		Parent int    `db:"parent"`
		NotUse int    `db:"notused"`
		Detail string `db:"detail"`
	}
	if err := s.r.SelectContext(ctx, &rows, `EXPLAIN QUERY PLAN `+q, args...); err != nil {
		return "", err
	}
	for _, r := range rows {
		lines = append(lines, r.Detail)
	}
	return strings.Join(lines, "\n"), nil
}
