-- +goose Up
-- source_id is the provider's id of the object a notification is about (a pull
-- request's number, a Slack ts, an email's Message-ID): stored and returned, never a
-- merge key, so it has no index. The times are Mastra's record fields: the last
-- delivery attempt, and when the record was seen, dismissed, archived or discarded.
ALTER TABLE records ADD COLUMN source_id TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN last_attempt_at INTEGER;
ALTER TABLE records ADD COLUMN seen_at INTEGER;
ALTER TABLE records ADD COLUMN dismissed_at INTEGER;
ALTER TABLE records ADD COLUMN archived_at INTEGER;
-- A signal's Mastra fields beyond the tag: its contents parts and provider options
-- (JSON {parts, providerOptions}).
ALTER TABLE signals ADD COLUMN signal_extra TEXT NOT NULL DEFAULT '{}';
ALTER TABLE records ADD COLUMN discarded_at INTEGER;

-- +goose Down
ALTER TABLE signals DROP COLUMN signal_extra;
ALTER TABLE records DROP COLUMN discarded_at;
ALTER TABLE records DROP COLUMN archived_at;
ALTER TABLE records DROP COLUMN dismissed_at;
ALTER TABLE records DROP COLUMN seen_at;
ALTER TABLE records DROP COLUMN last_attempt_at;
ALTER TABLE records DROP COLUMN source_id;
