-- +goose Up
-- Target health, shared by every replica: one row per agent whose target has failed at
-- least once. After failure_threshold consecutive failures the target is down: its
-- records wait (no attempts spent) while one probe per probe_interval finds out when it
-- is back. next_probe_at is claimed with a conditional UPDATE, so replicas probe once.
CREATE TABLE targets (
    agent         TEXT PRIMARY KEY,
    state         TEXT NOT NULL DEFAULT 'up', -- up, down
    since         BIGINT NOT NULL,            -- when it entered state
    failures      BIGINT NOT NULL DEFAULT 0,  -- consecutive failed attempts
    last_error    TEXT NOT NULL DEFAULT '',    -- redacted
    last_error_at BIGINT,
    next_probe_at BIGINT                      -- while down
);
-- max_age counts from a record's first attempt.
ALTER TABLE records ADD COLUMN first_attempt_at BIGINT;
-- The probe is the oldest due record of the agent; a target back up makes its waiting
-- records due at once.
CREATE INDEX records_agent_due ON records (agent, created_at) WHERE status = 'pending' AND due_at IS NOT NULL;

-- +goose Down
DROP INDEX records_agent_due;
ALTER TABLE records DROP COLUMN first_attempt_at;
DROP TABLE targets;
