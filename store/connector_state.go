package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// ConnectorState reads one key of a connector's durable state; ok is false when unset.
func (s *ConnectorState) ConnectorState(ctx context.Context, connector, key string) (value string, ok bool, err error) {
	err = s.r.GetContext(ctx, &value, s.q(`SELECT value FROM connector_state WHERE connector = ? AND key = ?`), connector, key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s state %q: %w", connector, key, err)
	}
	return value, true, nil
}

// SetConnectorState writes one key of a connector's durable state.
func (s *ConnectorState) SetConnectorState(ctx context.Context, connector, key, value string) error {
	return s.setConnectorState(ctx, s.w, connector, key, value, s.now())
}

// ConnectorStates lists every key of a connector (health pages show cursors).
func (s *ConnectorState) ConnectorStates(ctx context.Context, connector string) (map[string]string, error) {
	var rows []struct {
		Key   string `db:"key"`
		Value string `db:"value"`
	}
	if err := s.r.SelectContext(ctx, &rows, s.q(`SELECT key, value FROM connector_state WHERE connector = ? ORDER BY key`), connector); err != nil {
		return nil, fmt.Errorf("list %s state: %w", connector, err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Value
	}
	return out, nil
}

func (s *core) setConnectorState(ctx context.Context, x sqlx.ExecerContext, connector, key, value string, now time.Time) error {
	_, err := x.ExecContext(ctx, s.q(`INSERT INTO connector_state (connector, key, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (connector, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`),
		connector, key, cleanText(value), micros(now))
	if err != nil {
		return fmt.Errorf("save %s state %q: %w", connector, key, err)
	}
	return nil
}
