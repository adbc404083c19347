-- +goose Up
-- Times are unix microseconds (BIGINT) in both dialects: comparable, index friendly,
-- and free of driver-specific time formats.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    connector   TEXT NOT NULL,
    delivery_id TEXT,
    type        TEXT NOT NULL DEFAULT '',
    headers     TEXT NOT NULL DEFAULT '{}',
    body        BYTEA,
    received_at BIGINT NOT NULL,
    status      TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    replay_of   TEXT,
    records     BIGINT NOT NULL DEFAULT 0,
    -- provider redeliveries of this event (same delivery id), acknowledged and ignored
    redeliveries      BIGINT NOT NULL DEFAULT 0,
    last_redelivered_at BIGINT
);
CREATE UNIQUE INDEX events_delivery ON events (source, connector, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX events_received ON events (received_at, id);

CREATE TABLE records (
    id                  TEXT PRIMARY KEY,
    agent               TEXT NOT NULL,
    resource_id         TEXT NOT NULL,
    thread_id           TEXT NOT NULL,
    event_id            TEXT,
    route               TEXT NOT NULL DEFAULT '',
    source              TEXT NOT NULL,
    kind                TEXT NOT NULL,
    priority            TEXT NOT NULL,
    priority_rank       BIGINT NOT NULL,
    summary             TEXT NOT NULL,
    payload             TEXT,
    dedupe_key          TEXT NOT NULL DEFAULT '',
    coalesce_key        TEXT NOT NULL DEFAULT '',
    attributes          TEXT NOT NULL DEFAULT '{}',
    metadata            TEXT NOT NULL DEFAULT '{}',
    deliver_as          TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    coalesced_count     BIGINT NOT NULL DEFAULT 1,
    action              TEXT NOT NULL,
    reason              TEXT NOT NULL DEFAULT '',
    deliver_at          BIGINT,
    summary_at          BIGINT,
    full_when_idle      BOOLEAN NOT NULL DEFAULT FALSE,
    due_at              BIGINT,
    attempts            BIGINT NOT NULL DEFAULT 0,
    next_attempt_at     BIGINT,
    last_error          TEXT NOT NULL DEFAULT '',
    delivered_signal_id TEXT,
    summary_signal_id   TEXT,
    lease_owner         TEXT,
    lease_until         BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    delivered_at        BIGINT
);
CREATE INDEX records_due ON records (due_at) WHERE status = 'pending' AND due_at IS NOT NULL;
CREATE INDEX records_merge ON records (agent, resource_id, thread_id, source, kind) WHERE status = 'pending';
CREATE INDEX records_thread ON records (agent, resource_id, thread_id, created_at);
CREATE INDEX records_created ON records (created_at, id);
CREATE INDEX records_event ON records (event_id);

-- Threads carry the per-thread signal sequence and summary pacing.
CREATE TABLE threads (
    agent           TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    thread_id       TEXT NOT NULL,
    last_seq        BIGINT NOT NULL DEFAULT 0,
    last_summary_at BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id)
);

-- A thread is active while one of its runs is open and its lease has not expired.
CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    agent        TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    status       TEXT NOT NULL, -- open, finished, expired, aborted
    origin       TEXT NOT NULL DEFAULT 'agent', -- agent, wake, mastra
    opened_at    BIGINT NOT NULL,
    lease_until  BIGINT NOT NULL,
    closed_at    BIGINT
);
CREATE INDEX runs_open ON runs (agent, resource_id, thread_id) WHERE status = 'open';
CREATE INDEX runs_lease ON runs (lease_until) WHERE status = 'open';

-- Small durable key/value memory for connectors (e.g. last CI conclusion per branch).
CREATE TABLE connector_state (
    connector  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (connector, key)
);

-- +goose Down
DROP TABLE connector_state;
DROP TABLE runs;
DROP TABLE threads;
DROP TABLE records;
DROP TABLE events;
