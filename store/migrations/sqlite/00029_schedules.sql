-- +goose Up
-- Schedules: cron-driven signals to one agent thread, from config.yaml (origin config,
-- rewritten at each start) and the admin API (origin api). spec is the schedule's
-- definition as JSON (schedule.Spec). Every replica's scheduler reads the due ones; a
-- fire is claimed (claim_fire_at, claim_until) by compare-and-set before it is sent, so
-- one replica sends it, and a claim that lapses (a crash) is sent again under the same
-- signal id.
CREATE TABLE schedules (
    id            TEXT PRIMARY KEY,
    origin        TEXT NOT NULL,
    spec          TEXT NOT NULL,
    status        TEXT NOT NULL,             -- active or paused
    next_fire_at  INTEGER,
    last_fire_at  INTEGER,
    last_error    TEXT NOT NULL DEFAULT '',
    claim_fire_at INTEGER,
    claim_until   INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE status = 'active';

-- +goose Down
DROP TABLE schedules;
