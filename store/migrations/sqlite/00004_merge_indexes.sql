-- +goose Up
-- Finding the record a notification merges into must not scan a thread's pending
-- records (low-priority ones stay pending until seen): one index per merge key.
DROP INDEX records_merge;
CREATE INDEX records_merge_dedupe ON records (agent, resource_id, thread_id, source, kind, dedupe_key) WHERE status = 'pending';
CREATE INDEX records_merge_coalesce ON records (agent, resource_id, thread_id, source, kind, coalesce_key) WHERE status = 'pending';

-- +goose Down
DROP INDEX records_merge_coalesce;
DROP INDEX records_merge_dedupe;
CREATE INDEX records_merge ON records (agent, resource_id, thread_id, source, kind) WHERE status = 'pending';
