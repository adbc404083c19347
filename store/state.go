package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// AdvanceStateLane applies agent.NextState to the lane (k, lane) atomically: a state signal
// with the lane's current cacheKey and mode is skipped, anything else moves the lane to the
// next version. prev is the lane before (nil for a new lane), for RestoreStateLane.
func (s *States) AdvanceStateLane(ctx context.Context, k inbox.ThreadKey, lane, cacheKey, mode string, now time.Time) (next agent.StateLane, prev *agent.StateLane, skipped bool, err error) {
	// Compared with the stored (cleaned) key, so a resend with the same key still matches.
	cacheKey = cleanText(cacheKey)
	err = s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := s.lockThread(ctx, tx, k, now); err != nil {
			return err
		}
		var row struct {
			Version  int    `db:"version"`
			CacheKey string `db:"cache_key"`
			Mode     string `db:"mode"`
		}
		err := tx.GetContext(ctx, &row, s.q(`SELECT version, cache_key, mode FROM state_lanes
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND lane_id = ?`), k.Agent, k.Resource, k.Thread, lane)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read state lane %q: %w", lane, err)
		default:
			prev = &agent.StateLane{Version: row.Version, CacheKey: row.CacheKey, Mode: row.Mode}
		}
		next, skipped = agent.NextState(prev, cacheKey, mode)
		if skipped {
			return nil
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO state_lanes (agent, resource_id, thread_id, lane_id, version, cache_key, mode, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (agent, resource_id, thread_id, lane_id) DO UPDATE SET
				version = excluded.version, cache_key = excluded.cache_key, mode = excluded.mode, updated_at = excluded.updated_at`),
			k.Agent, k.Resource, k.Thread, lane, next.Version, next.CacheKey, next.Mode, micros(now))
		if err != nil {
			return fmt.Errorf("write state lane %q: %w", lane, err)
		}
		return nil
	})
	if err != nil {
		return agent.StateLane{}, nil, false, fmt.Errorf("advance state lane of %s: %w", k, err)
	}
	return next, prev, skipped, nil
}

// RestoreStateLane undoes an advance to version whose signal could not be delivered, so
// resending it is not skipped. A lane moved on since is left alone.
func (s *States) RestoreStateLane(ctx context.Context, k inbox.ThreadKey, lane string, prev *agent.StateLane, version int) error {
	var err error
	if prev == nil {
		_, err = s.w.ExecContext(ctx, s.q(`DELETE FROM state_lanes
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND lane_id = ? AND version = ?`),
			k.Agent, k.Resource, k.Thread, lane, version)
	} else {
		_, err = s.w.ExecContext(ctx, s.q(`UPDATE state_lanes SET version = ?, cache_key = ?, mode = ?
			WHERE agent = ? AND resource_id = ? AND thread_id = ? AND lane_id = ? AND version = ?`),
			prev.Version, prev.CacheKey, prev.Mode, k.Agent, k.Resource, k.Thread, lane, version)
	}
	if err != nil {
		return fmt.Errorf("restore state lane %q of %s: %w", lane, k, err)
	}
	return nil
}
