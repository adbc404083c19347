-- +goose Up
-- The reply outbox: answers an agent posts where a notification came from. id is the
-- agent's id, unique gateway-wide since it is also the marker the platform post carries
-- (found again after a crash). attempts counts sends begun: it is raised before each send,
-- so a reply with attempts > 0 is looked for on the platform before it is sent again.
CREATE TABLE replies (
    id              TEXT PRIMARY KEY,
    agent           TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    thread_id       TEXT NOT NULL,
    text            TEXT NOT NULL,
    reply_to        TEXT NOT NULL,               -- JSON reply.To
    source          TEXT NOT NULL,
    connector       TEXT NOT NULL,
    watch           INTEGER NOT NULL DEFAULT 0,
    status          TEXT NOT NULL,               -- pending, queued, sent, failed, declined
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,                      -- due time while queued
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    platform_id     TEXT NOT NULL DEFAULT '',
    url             TEXT NOT NULL DEFAULT '',
    sent_at         INTEGER,
    queued_at       INTEGER NOT NULL,               -- when it last became queued: max_age counts from here
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX replies_due ON replies (next_attempt_at) WHERE status = 'queued';
CREATE INDEX replies_thread ON replies (agent, resource_id, thread_id, created_at);
CREATE INDEX replies_created ON replies (created_at, id);
CREATE INDEX replies_platform ON replies (source, connector, platform_id) WHERE platform_id <> '';

-- +goose Down
DROP TABLE replies;
