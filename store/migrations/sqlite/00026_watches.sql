-- +goose Up
-- Watches: an agent thread's durable subscription to one thing (a pull request, a Slack
-- thread, an email conversation, a generic object). match_key is watch.Key(source,
-- connector, resource), looked up for every routed event among the live (not ended)
-- watches; a thread holds one live watch per key, an agent a bounded number.
CREATE TABLE watches (
    id          TEXT PRIMARY KEY,            -- time-ordered: listings page by it
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    source      TEXT NOT NULL,
    connector   TEXT NOT NULL,
    resource    TEXT NOT NULL,               -- canonical (watch.Resource)
    match_key   TEXT NOT NULL,
    kinds       TEXT NOT NULL DEFAULT 'null', -- JSON array of kind patterns; null: all
    priority    TEXT NOT NULL DEFAULT '',
    forever     INTEGER NOT NULL DEFAULT 0,
    reply_id    TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    end_reason  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX watches_live ON watches (match_key) WHERE ended_at IS NULL;
CREATE UNIQUE INDEX watches_live_thread ON watches (agent, resource_id, thread_id, match_key) WHERE ended_at IS NULL;
CREATE INDEX watches_live_agent ON watches (agent) WHERE ended_at IS NULL;
CREATE INDEX watches_due ON watches (expires_at, id) WHERE ended_at IS NULL;
CREATE INDEX watches_thread ON watches (agent, resource_id, thread_id, id);

-- The repositories a GitHub connector has received a verified delivery for: a watch on
-- any other repository is refused (nothing would ever match it).
CREATE TABLE connector_repos (
    connector     TEXT NOT NULL,
    repo          TEXT NOT NULL,             -- owner/name, lower-cased
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (connector, repo)
);

-- +goose Down
DROP TABLE connector_repos;
DROP TABLE watches;
