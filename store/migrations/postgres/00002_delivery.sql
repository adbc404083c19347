-- +goose Up
-- The per-thread signal log: every signal a thread received and every run opened or closed
-- on it, in order. seq comes from threads.last_seq and is the SSE event id; id is unique
-- so a retried append is a no-op (exactly once toward stream subscribers).
CREATE TABLE signals (
    agent             TEXT NOT NULL,
    resource_id       TEXT NOT NULL,
    thread_id         TEXT NOT NULL,
    seq               BIGINT NOT NULL,
    id                TEXT NOT NULL UNIQUE,
    event             TEXT NOT NULL, -- signal, run
    run_id            TEXT NOT NULL DEFAULT '',
    action            TEXT NOT NULL DEFAULT '', -- signal frames: wake, deliver, persist
    type              TEXT NOT NULL DEFAULT '',
    tag_name          TEXT NOT NULL DEFAULT '',
    contents          TEXT NOT NULL DEFAULT '',
    attributes        TEXT NOT NULL DEFAULT '{}', -- JSON object in insertion order
    metadata          TEXT NOT NULL DEFAULT '{}',
    xml               TEXT NOT NULL DEFAULT '',
    record_ids        TEXT NOT NULL DEFAULT '[]',
    run_status        TEXT NOT NULL DEFAULT '', -- run frames: open, finished, expired, aborted
    origin            TEXT NOT NULL DEFAULT '', -- run frames: agent, wake
    signal_created_at BIGINT,
    accepted_at       BIGINT,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id, seq)
);
CREATE INDEX signals_created ON signals (created_at);

-- One row per attempt to hand a signal to a target (the admin API lists it).
CREATE TABLE delivery_attempts (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent        TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    target       TEXT NOT NULL,
    signal_id    TEXT NOT NULL,
    record_ids   TEXT NOT NULL DEFAULT '[]',
    attempt      BIGINT NOT NULL,
    outcome      TEXT NOT NULL, -- delivered, retry, failed
    status_code  BIGINT NOT NULL DEFAULT 0,
    error        TEXT NOT NULL DEFAULT '',
    duration_us  BIGINT NOT NULL DEFAULT 0,
    attempted_at BIGINT NOT NULL
);
CREATE INDEX delivery_attempts_at ON delivery_attempts (attempted_at, id);
CREATE INDEX delivery_attempts_signal ON delivery_attempts (signal_id);
CREATE INDEX delivery_attempts_thread ON delivery_attempts (agent, resource_id, thread_id, attempted_at);

-- State signal lanes: the last accepted (version, cacheKey, mode) per (thread, state id).
CREATE TABLE state_lanes (
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    lane_id     TEXT NOT NULL,
    version     BIGINT NOT NULL,
    cache_key   TEXT NOT NULL DEFAULT '',
    mode        TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id, lane_id)
);

-- The dispatcher leases whole threads (a summary covers all of a thread's due records, so
-- two workers must never split one thread); summaries counts summaries sent, which keeps a
-- summary's signal id stable across retries.
ALTER TABLE threads ADD COLUMN lease_owner TEXT;
ALTER TABLE threads ADD COLUMN lease_until BIGINT;
ALTER TABLE threads ADD COLUMN summaries BIGINT NOT NULL DEFAULT 0;
CREATE INDEX threads_lease ON threads (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX records_idle ON records (agent, resource_id, thread_id) WHERE status = 'pending' AND full_when_idle;

-- +goose Down
DROP INDEX records_idle;
DROP INDEX threads_lease;
ALTER TABLE threads DROP COLUMN summaries;
ALTER TABLE threads DROP COLUMN lease_until;
ALTER TABLE threads DROP COLUMN lease_owner;
DROP TABLE state_lanes;
DROP TABLE delivery_attempts;
DROP TABLE signals;
