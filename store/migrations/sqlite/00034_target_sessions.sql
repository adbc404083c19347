-- +goose Up
-- The session a hosted agent runtime (openai-agents, claude-agents) keeps for a gateway
-- thread: created on the thread's first signal and used for every later one. The
-- runtime's webhooks name only the session, so session_id leads back to the thread.
CREATE TABLE target_sessions (
    agent      TEXT NOT NULL,
    resource   TEXT NOT NULL,
    thread     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (agent, resource, thread)
);
CREATE UNIQUE INDEX target_sessions_session ON target_sessions (agent, session_id);

-- +goose Down
DROP TABLE target_sessions;
