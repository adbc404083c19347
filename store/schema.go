package store

import (
	"context"
	"fmt"
)

// versionTable is goose's bookkeeping table (its default name).
const versionTable = "goose_db_version"

// Current reports whether every migration is applied, without writing: a database
// never migrated (no version table) is not current, and is left as it is (goose's
// own check would create the table).
func (s *DB) Current(ctx context.Context) (bool, error) {
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if s.driver == DriverPostgres {
		q = `SELECT COUNT(*) FROM (SELECT to_regclass(?) AS t) r WHERE r.t IS NOT NULL`
	}
	var n int
	if err := s.w.GetContext(ctx, &n, s.q(q), versionTable); err != nil {
		return false, fmt.Errorf("check migrations: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	p, err := s.provider()
	if err != nil {
		return false, fmt.Errorf("check migrations: %w", err)
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, fmt.Errorf("check migrations: %w", err)
	}
	return !pending, nil
}
