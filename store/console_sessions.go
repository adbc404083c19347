package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// sessionHash is how a console session id is kept: a copy of the database holds nothing
// a browser could present.
func sessionHash(id string) string {
	sum := sha256.Sum256([]byte("console-session\x00" + id))
	return hex.EncodeToString(sum[:])
}

// CreateConsoleSession records a console sign-in with the admin token named token,
// lasting until expires. Sessions expired by now are swept in the same transaction, so
// the table holds about the sign-ins of one session_ttl.
func (s *ConsoleSessions) CreateConsoleSession(ctx context.Context, id, token string, now, expires time.Time) error {
	if id == "" || token == "" {
		return errors.New("create console session: id and token name are required")
	}
	return s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM console_sessions WHERE expires_at <= ?`), micros(now)); err != nil {
			return fmt.Errorf("sweep expired console sessions: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO console_sessions (id_hash, token, created_at, expires_at) VALUES (?, ?, ?, ?)`),
			sessionHash(id), cleanText(token), micros(now), micros(expires)); err != nil {
			return fmt.Errorf("create console session of %q: %w", token, err)
		}
		return nil
	})
}

// ConsoleSessionLive says whether session id is live at now: false once it was signed
// out, swept or has expired.
func (s *ConsoleSessions) ConsoleSessionLive(ctx context.Context, id string, now time.Time) (bool, error) {
	var one int
	err := s.r.GetContext(ctx, &one, s.q(`SELECT 1 FROM console_sessions WHERE id_hash = ? AND expires_at > ?`),
		sessionHash(id), micros(now))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read console session: %w", err)
	}
	return true, nil
}

// DeleteConsoleSession ends one session (sign-out); an unknown id is no error.
func (s *ConsoleSessions) DeleteConsoleSession(ctx context.Context, id string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM console_sessions WHERE id_hash = ?`), sessionHash(id)); err != nil {
			return fmt.Errorf("delete console session: %w", err)
		}
		return nil
	})
}

// DeleteConsoleSessionsOf ends every session signed in with the admin token named token
// (sign out everywhere) and returns how many there were.
func (s *ConsoleSessions) DeleteConsoleSessionsOf(ctx context.Context, token string) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM console_sessions WHERE token = ?`), cleanText(token))
		if err != nil {
			return fmt.Errorf("delete console sessions of %q: %w", token, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("delete console sessions of %q: %w", token, err)
		}
		return nil
	})
	return n, err
}
