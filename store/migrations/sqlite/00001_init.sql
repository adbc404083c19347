-- +goose Up
-- Times are unix microseconds (INTEGER) in both dialects: comparable, index friendly,
-- and free of driver-specific time formats.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    connector   TEXT NOT NULL,
    delivery_id TEXT,
    type        TEXT NOT NULL DEFAULT '',
    headers     TEXT NOT NULL DEFAULT '{}',
    body        BLOB,
    received_at INTEGER NOT NULL,
    status      TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    replay_of   TEXT,
    records     INTEGER NOT NULL DEFAULT 0,
    -- provider redeliveries of this event (same delivery id), acknowledged and ignored
    redeliveries      INTEGER NOT NULL DEFAULT 0,
    last_redelivered_at INTEGER
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
    priority_rank       INTEGER NOT NULL,
    summary             TEXT NOT NULL,
    payload             TEXT,
    dedupe_key          TEXT NOT NULL DEFAULT '',
    coalesce_key        TEXT NOT NULL DEFAULT '',
    attributes          TEXT NOT NULL DEFAULT '{}',
    metadata            TEXT NOT NULL DEFAULT '{}',
    deliver_as          TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    coalesced_count     INTEGER NOT NULL DEFAULT 1,
    action              TEXT NOT NULL,
    reason              TEXT NOT NULL DEFAULT '',
    deliver_at          INTEGER,
    summary_at          INTEGER,
    full_when_idle      INTEGER NOT NULL DEFAULT 0,
    due_at              INTEGER,
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_at     INTEGER,
    last_error          TEXT NOT NULL DEFAULT '',
    delivered_signal_id TEXT,
    summary_signal_id   TEXT,
    lease_owner         TEXT,
    lease_until         INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    delivered_at        INTEGER
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
    last_seq        INTEGER NOT NULL DEFAULT 0,
    last_summary_at INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
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
    opened_at    INTEGER NOT NULL,
    lease_until  INTEGER NOT NULL,
    closed_at    INTEGER
);
CREATE INDEX runs_open ON runs (agent, resource_id, thread_id) WHERE status = 'open';
CREATE INDEX runs_lease ON runs (lease_until) WHERE status = 'open';

-- Small durable key/value memory for connectors (e.g. last CI conclusion per branch).
CREATE TABLE connector_state (
    connector  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (connector, key)
);

-- +goose Down
DROP TABLE connector_state;
DROP TABLE runs;
DROP TABLE threads;
DROP TABLE records;
DROP TABLE events;
