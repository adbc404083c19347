-- +goose Up
-- One index of the due records per thread (and so per agent) serves what two did: a
-- dispatch pass reads its threads' due records by it, where it walked every record the
-- thread ever had (records_thread), and a down target's probe and its release find the
-- agent's due records by its first column, as records_agent_due did. Same entries per
-- record; the pass's read no longer grows with a thread's history.
DROP INDEX records_agent_due;
CREATE INDEX records_thread_due ON records (agent, resource_id, thread_id, due_at) WHERE status = 'pending' AND due_at IS NOT NULL;

-- +goose Down
DROP INDEX records_thread_due;
CREATE INDEX records_agent_due ON records (agent, created_at) WHERE status = 'pending' AND due_at IS NOT NULL;
