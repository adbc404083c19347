package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/silence"
)

var _ silence.Store = (*Silences)(nil)

const silenceColumns = `id, spec, starts_at, ends_at, expired_by, updated_at`

type silenceRow struct {
	ID        string `db:"id"`
	Spec      string `db:"spec"`
	StartsAt  int64  `db:"starts_at"`
	EndsAt    int64  `db:"ends_at"`
	ExpiredBy string `db:"expired_by"`
	UpdatedAt int64  `db:"updated_at"`
}

func (r silenceRow) silence() (silence.Silence, error) {
	out := silence.Silence{ID: r.ID, ExpiredBy: r.ExpiredBy, UpdatedAt: fromMicros(r.UpdatedAt)}
	if err := json.Unmarshal([]byte(r.Spec), &out.Input); err != nil {
		return out, fmt.Errorf("decode silence %s: %w", r.ID, err)
	}
	// The columns rule: an early expire moves them, not the spec.
	out.StartsAt, out.EndsAt = fromMicros(r.StartsAt), fromMicros(r.EndsAt)
	return out, nil
}

func silencesOf(rows []silenceRow) ([]silence.Silence, error) {
	out := make([]silence.Silence, 0, len(rows))
	for _, r := range rows {
		s, err := r.silence()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// CreateSilence stores a new silence.
func (s *Silences) CreateSilence(ctx context.Context, in silence.Silence) error {
	spec, err := json.Marshal(in.Input)
	if err != nil {
		return fmt.Errorf("encode silence: %w", err)
	}
	_, err = s.w.ExecContext(ctx, s.q(`INSERT INTO silences (id, spec, starts_at, ends_at, expired_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, '', ?, ?)`), in.ID, cleanText(string(spec)), micros(in.StartsAt), micros(in.EndsAt),
		micros(in.UpdatedAt), micros(in.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert silence %s: %w", in.ID, err)
	}
	return nil
}

// Silence reads one silence, or inbox.ErrNotFound.
func (s *Silences) Silence(ctx context.Context, id string) (silence.Silence, error) {
	return s.silenceIn(ctx, s.r, id)
}

func (s *Silences) silenceIn(ctx context.Context, q sqlx.QueryerContext, id string) (silence.Silence, error) {
	var row silenceRow
	err := sqlx.GetContext(ctx, q, &row, s.q(`SELECT `+silenceColumns+` FROM silences WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return silence.Silence{}, fmt.Errorf("silence %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return silence.Silence{}, fmt.Errorf("read silence %s: %w", id, err)
	}
	return row.silence()
}

// ListSilences lists up to limit silences in state as of now ("" any), newest first.
func (s *Silences) ListSilences(ctx context.Context, state silence.State, now time.Time, limit int) ([]silence.Silence, error) {
	query := `SELECT ` + silenceColumns + ` FROM silences`
	var args []any
	switch state {
	case silence.StatePending:
		query += ` WHERE starts_at > ? AND ends_at > ?`
		args = append(args, micros(now), micros(now))
	case silence.StateActive:
		query += ` WHERE starts_at <= ? AND ends_at > ?`
		args = append(args, micros(now), micros(now))
	case silence.StateExpired:
		query += ` WHERE ends_at <= ?`
		args = append(args, micros(now))
	}
	var rows []silenceRow
	if err := s.r.SelectContext(ctx, &rows, s.q(query+` ORDER BY created_at DESC, id DESC LIMIT ?`), append(args, limit)...); err != nil {
		return nil, fmt.Errorf("list silences: %w", err)
	}
	return silencesOf(rows)
}

// qLiveSilences is read by every replica's silence refresh, twice a second.
const qLiveSilences = `SELECT ` + silenceColumns + ` FROM silences WHERE ends_at > ? ORDER BY id`

// LiveSilences lists the silences not ended at now.
func (s *Silences) LiveSilences(ctx context.Context, now time.Time) ([]silence.Silence, error) {
	var rows []silenceRow
	if err := s.readSelect(ctx, &rows, qLiveSilences, micros(now)); err != nil {
		return nil, fmt.Errorf("read live silences: %w", err)
	}
	return silencesOf(rows)
}

// ExpireSilence ends silence id at now, unless it has ended, and in the same
// transaction moves the hold of every record it holds to now, so the next release
// decides them again. It answers the silence as it is then, or inbox.ErrNotFound.
func (s *Silences) ExpireSilence(ctx context.Context, id, by string, now time.Time) (silence.Silence, error) {
	var out silence.Silence
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE silences SET ends_at = ?, starts_at = CASE WHEN starts_at > ? THEN ? ELSE starts_at END,
			expired_by = ?, updated_at = ? WHERE id = ? AND ends_at > ?`),
			micros(now), micros(now), micros(now), cleanText(by), micros(now), id, micros(now))
		if err != nil {
			return fmt.Errorf("end silence: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE records SET held_until = ?
				WHERE status = 'pending' AND held_until IS NOT NULL AND held_until > ? AND held_by = ?`),
				micros(now), micros(now), silence.Hold(id, now).By); err != nil {
				return fmt.Errorf("end the holds of silence %s: %w", id, err)
			}
		}
		out, err = s.silenceIn(ctx, tx, id)
		return err
	})
	if err != nil {
		return silence.Silence{}, fmt.Errorf("expire silence %s: %w", id, err)
	}
	return out, nil
}

// capSilenceHold bounds a record's hold by a silence to the silence's end as stored. A
// replica's in-memory silences lag an early expire by up to a refresh: a record held by
// it meanwhile would otherwise stay held until the silence's first end. On PostgreSQL the
// silence's row is read FOR SHARE, so an expire (which updates it before moving its
// records' holds) waits for this transaction and then sees its record, or this one waits
// for the expire and reads the new end.
func (s *core) capSilenceHold(ctx context.Context, tx *sqlx.Tx, by string, until *time.Time) (*time.Time, error) {
	id, ok := strings.CutPrefix(by, silenceHoldPrefix)
	if !ok || until == nil {
		return until, nil
	}
	lock := ""
	if s.driver == DriverPostgres {
		lock = ` FOR SHARE`
	}
	var ends int64
	err := tx.GetContext(ctx, &ends, s.q(`SELECT ends_at FROM silences WHERE id = ?`+lock), id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return until, nil // not a stored silence (a test's holder): nothing to bound it by
	case err != nil:
		return nil, fmt.Errorf("read the end of silence %s: %w", id, err)
	}
	if end := fromMicros(ends); end.Before(*until) {
		return &end, nil
	}
	return until, nil
}

// silenceHoldPrefix leads Hold.By for a silence's hold.
var silenceHoldPrefix = silence.Hold("", time.Time{}).By
