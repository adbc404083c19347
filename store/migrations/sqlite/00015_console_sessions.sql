-- +goose Up
-- Console sign-ins: a row per browser session, so signing out ends it on every replica.
-- id_hash is the SHA-256 of the session id (the cookie's secret is never stored); token
-- is the admin token's name, for "sign out everywhere".
CREATE TABLE console_sessions (
    id_hash    TEXT PRIMARY KEY,
    token      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_token ON console_sessions (token);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
