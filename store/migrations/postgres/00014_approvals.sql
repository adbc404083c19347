-- +goose Up
-- Tool approvals: an agent's tool call waiting for a person's decision from Slack.
-- Only a pending approval changes, once (approved, declined or expired).
CREATE TABLE approvals (
    id              TEXT PRIMARY KEY,
    agent           TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    thread_id       TEXT NOT NULL,
    origin          TEXT NOT NULL,               -- mastra, api
    run_id          TEXT NOT NULL DEFAULT '',    -- Mastra's run id
    tool_call_id    TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT,                        -- JSON, bounded
    truncated       BIGINT NOT NULL DEFAULT 0,
    description     TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,               -- pending, approved, declined, expired
    connector       TEXT NOT NULL DEFAULT '',
    channel         TEXT NOT NULL DEFAULT '',
    message_ts      TEXT NOT NULL DEFAULT '',
    thread_ts       TEXT NOT NULL DEFAULT '',
    post_error      TEXT NOT NULL DEFAULT '',
    decided_by      TEXT NOT NULL DEFAULT '',
    decided_by_name TEXT NOT NULL DEFAULT '',
    decided_at      BIGINT,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX approvals_call ON approvals (agent, resource_id, thread_id, tool_call_id);
CREATE INDEX approvals_created ON approvals (created_at, id);
CREATE INDEX approvals_expiry ON approvals (expires_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE approvals;
