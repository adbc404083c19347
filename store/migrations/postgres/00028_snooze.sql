-- +goose Up
-- A snoozed record is hidden until snoozed_until, then decided again. It still absorbs
-- duplicates and updates of its thing (same dedupe or coalesce key), so the merge
-- indexes cover it beside pending ones; the release finds due ones by its own index.
ALTER TABLE records ADD COLUMN snoozed_until BIGINT;
CREATE INDEX records_snoozed ON records (snoozed_until) WHERE status = 'snoozed';
DROP INDEX records_merge_dedupe;
DROP INDEX records_merge_coalesce;
CREATE INDEX records_merge_dedupe ON records (agent, resource_id, thread_id, source, kind, dedupe_key) WHERE status IN ('pending', 'snoozed');
CREATE INDEX records_merge_coalesce ON records (agent, resource_id, thread_id, source, kind, coalesce_key) WHERE status IN ('pending', 'snoozed');

-- +goose Down
DROP INDEX records_merge_coalesce;
DROP INDEX records_merge_dedupe;
CREATE INDEX records_merge_dedupe ON records (agent, resource_id, thread_id, source, kind, dedupe_key) WHERE status = 'pending';
CREATE INDEX records_merge_coalesce ON records (agent, resource_id, thread_id, source, kind, coalesce_key) WHERE status = 'pending';
DROP INDEX records_snoozed;
ALTER TABLE records DROP COLUMN snoozed_until;
