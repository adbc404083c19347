-- +goose Up
-- A held record (a silence or a muting interval holds it) stays pending with nothing
-- scheduled until held_until; held_by names what holds it ("silence:<id>",
-- "mute:<interval>"). The release finds ended holds by records_held; an early expire
-- moves its records' held_until to that moment.
ALTER TABLE records ADD COLUMN held_by TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN held_until BIGINT;
CREATE INDEX records_held ON records (held_until) WHERE status = 'pending' AND held_until IS NOT NULL;

-- Silences: runtime rows made through the admin API. spec is silence.Input as JSON
-- (matchers, when, createdBy, comment, includeUrgent); starts_at and ends_at are copied
-- out of it for the state queries, and an early expire moves ends_at to that moment.
CREATE TABLE silences (
    id         TEXT PRIMARY KEY,
    spec       TEXT NOT NULL,
    starts_at  BIGINT NOT NULL,
    ends_at    BIGINT NOT NULL,
    expired_by TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX silences_ends ON silences (ends_at);

-- +goose Down
DROP TABLE silences;
DROP INDEX records_held;
ALTER TABLE records DROP COLUMN held_until;
ALTER TABLE records DROP COLUMN held_by;
