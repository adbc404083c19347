-- +goose Up
-- Signal ids are unique per thread, not across the gateway: an agent's caller-chosen id
-- must neither collide with another agent's nor be silently dropped because of it.
-- SQLite cannot drop a column's UNIQUE constraint, so both tables are rebuilt.
CREATE TABLE signals_new (
    agent             TEXT NOT NULL,
    resource_id       TEXT NOT NULL,
    thread_id         TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    id                TEXT NOT NULL,
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
    signal_created_at INTEGER,
    accepted_at       INTEGER,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id, seq)
);
INSERT INTO signals_new (agent, resource_id, thread_id, seq, id, event, run_id, action, type, tag_name, contents,
    attributes, metadata, xml, record_ids, run_status, origin, signal_created_at, accepted_at, created_at)
SELECT agent, resource_id, thread_id, seq, id, event, run_id, action, type, tag_name, contents,
    attributes, metadata, xml, record_ids, run_status, origin, signal_created_at, accepted_at, created_at FROM signals;
DROP TABLE signals;
ALTER TABLE signals_new RENAME TO signals;
CREATE INDEX signals_created ON signals (created_at);
CREATE INDEX signals_run ON signals (run_id) WHERE run_id <> '';
CREATE UNIQUE INDEX signals_thread_id ON signals (agent, resource_id, thread_id, id);

CREATE TABLE recoveries_new (
    signal_id   TEXT NOT NULL, -- the in-flight signal, as logged in signals
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL, -- the run that ended without finishing
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id, signal_id)
);
INSERT INTO recoveries_new (signal_id, agent, resource_id, thread_id, run_id, created_at)
SELECT signal_id, agent, resource_id, thread_id, run_id, created_at FROM recoveries;
DROP TABLE recoveries;
ALTER TABLE recoveries_new RENAME TO recoveries;

-- +goose Down
CREATE TABLE recoveries_old (
    signal_id   TEXT PRIMARY KEY,
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
INSERT OR IGNORE INTO recoveries_old SELECT signal_id, agent, resource_id, thread_id, run_id, created_at FROM recoveries;
DROP TABLE recoveries;
ALTER TABLE recoveries_old RENAME TO recoveries;
CREATE INDEX recoveries_thread ON recoveries (agent, resource_id, thread_id);
DROP INDEX signals_thread_id;
CREATE UNIQUE INDEX signals_id ON signals (id);
