package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/schedule"
)

var _ schedule.Store = (*Schedules)(nil)

const scheduleColumns = `id, origin, spec, status, next_fire_at, last_fire_at, last_error, claim_fire_at, claim_until,
	created_at, updated_at`

type scheduleRow struct {
	ID          string        `db:"id"`
	Origin      string        `db:"origin"`
	Spec        string        `db:"spec"`
	Status      string        `db:"status"`
	NextFireAt  sql.NullInt64 `db:"next_fire_at"`
	LastFireAt  sql.NullInt64 `db:"last_fire_at"`
	LastError   string        `db:"last_error"`
	ClaimFireAt sql.NullInt64 `db:"claim_fire_at"`
	ClaimUntil  sql.NullInt64 `db:"claim_until"`
	CreatedAt   int64         `db:"created_at"`
	UpdatedAt   int64         `db:"updated_at"`
}

func (r scheduleRow) schedule() (schedule.Schedule, error) {
	var spec schedule.Spec
	if err := json.Unmarshal([]byte(r.Spec), &spec); err != nil {
		return schedule.Schedule{}, fmt.Errorf("decode schedule %s: %w", r.ID, err)
	}
	spec.ID = r.ID
	return schedule.Schedule{Spec: spec, Origin: r.Origin, Status: schedule.Status(r.Status),
		NextFireAt: fromNullMicros(r.NextFireAt), LastFireAt: fromNullMicros(r.LastFireAt), LastError: r.LastError,
		ClaimFireAt: fromNullMicros(r.ClaimFireAt), ClaimUntil: fromNullMicros(r.ClaimUntil),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt)}, nil
}

func schedulesOf(rows []scheduleRow) ([]schedule.Schedule, error) {
	out := make([]schedule.Schedule, 0, len(rows))
	for _, r := range rows {
		sc, err := r.schedule()
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func specText(s schedule.Spec) (string, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode schedule %s: %w", s.ID, err)
	}
	return cleanText(string(raw)), nil
}

// CreateSchedule inserts s; schedule.ErrExists when its id is taken.
func (s *Schedules) CreateSchedule(ctx context.Context, sc schedule.Schedule) error {
	spec, err := specText(sc.Spec)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO schedules (id, origin, spec, status, next_fire_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			sc.ID, sc.Origin, spec, string(sc.Status), nullMicros(sc.NextFireAt), micros(sc.CreatedAt), micros(sc.UpdatedAt))
		if err != nil {
			return fmt.Errorf("insert schedule %s: %w", sc.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %s: %w", sc.ID, schedule.ErrExists)
		}
		return nil
	})
}

// Schedule reads one schedule.
func (s *Schedules) Schedule(ctx context.Context, id string) (schedule.Schedule, error) {
	var row scheduleRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+scheduleColumns+` FROM schedules WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return schedule.Schedule{}, fmt.Errorf("schedule %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return row.schedule()
}

// ListSchedules lists every schedule by id.
func (s *Schedules) ListSchedules(ctx context.Context) ([]schedule.Schedule, error) {
	var rows []scheduleRow
	if err := s.r.SelectContext(ctx, &rows, `SELECT `+scheduleColumns+` FROM schedules ORDER BY id`); err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return schedulesOf(rows)
}

// UpdateSchedule replaces a schedule's spec, origin, status and next fire, and drops any
// claim on it (a fire claimed before is not finished over the change).
func (s *Schedules) UpdateSchedule(ctx context.Context, sc schedule.Schedule) error {
	spec, err := specText(sc.Spec)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE schedules SET origin = ?, spec = ?, status = ?, next_fire_at = ?,
			updated_at = ?, claim_fire_at = NULL, claim_until = NULL WHERE id = ?`),
			sc.Origin, spec, string(sc.Status), nullMicros(sc.NextFireAt), micros(sc.UpdatedAt), sc.ID)
		if err != nil {
			return fmt.Errorf("update schedule %s: %w", sc.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %s: %w", sc.ID, inbox.ErrNotFound)
		}
		return nil
	})
}

// DeleteSchedule deletes a schedule.
func (s *Schedules) DeleteSchedule(ctx context.Context, id string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM schedules WHERE id = ?`), id)
		if err != nil {
			return fmt.Errorf("delete schedule %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %s: %w", id, inbox.ErrNotFound)
		}
		return nil
	})
}

// DueSchedules lists the active schedules due at now that no replica holds.
func (s *Schedules) DueSchedules(ctx context.Context, now time.Time, limit int) ([]schedule.Schedule, error) {
	var rows []scheduleRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+scheduleColumns+` FROM schedules
		WHERE status = 'active' AND next_fire_at <= ? AND (claim_until IS NULL OR claim_until <= ?)
		ORDER BY next_fire_at, id LIMIT ?`), micros(now), micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list due schedules: %w", err)
	}
	return schedulesOf(rows)
}

// asRead is the compare-and-set condition "the schedule is as sc was read": still
// active, with the same next fire, claim and last change.
const asRead = `id = ? AND status = 'active' AND next_fire_at = ? AND COALESCE(claim_until, -1) = ? AND updated_at = ?`

func asReadArgs(sc schedule.Schedule) []any {
	until := int64(-1)
	if sc.ClaimUntil != nil {
		until = micros(*sc.ClaimUntil)
	}
	return []any{sc.ID, nullMicros(sc.NextFireAt), until, micros(sc.UpdatedAt)}
}

func (s *Schedules) casSchedule(ctx context.Context, what, set string, args []any) (bool, error) {
	var ok bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE schedules SET `+set), args...)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	return ok, err
}

// ClaimFire claims fire of sc, as read, until until; false when another replica did
// first or the schedule changed.
func (s *Schedules) ClaimFire(ctx context.Context, sc schedule.Schedule, fire, until time.Time) (bool, error) {
	return s.casSchedule(ctx, "claim fire of schedule "+sc.ID, `claim_fire_at = ?, claim_until = ? WHERE `+asRead,
		append([]any{micros(fire), micros(until)}, asReadArgs(sc)...))
}

// FinishFire ends the claim on fire: false when the schedule changed meanwhile (a
// patch, a pause, a delete).
func (s *Schedules) FinishFire(ctx context.Context, id string, fire, next time.Time, errMsg string) (bool, error) {
	return s.casSchedule(ctx, "finish fire of schedule "+id, `next_fire_at = ?, last_fire_at = ?, last_error = ?,
		claim_fire_at = NULL, claim_until = NULL WHERE id = ? AND claim_fire_at = ?`,
		[]any{micros(next), micros(fire), cleanText(errMsg), id, micros(fire)})
}

// SkipFires moves sc, as read, to next without firing.
func (s *Schedules) SkipFires(ctx context.Context, sc schedule.Schedule, next time.Time) (bool, error) {
	return s.casSchedule(ctx, "skip fires of schedule "+sc.ID, `next_fire_at = ?, claim_fire_at = NULL, claim_until = NULL WHERE `+asRead,
		append([]any{micros(next)}, asReadArgs(sc)...))
}
