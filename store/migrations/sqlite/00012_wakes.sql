-- +goose Up
-- Wake budgets (agents[].wake_budget): the times of a thread's recent wakes, a JSON
-- array of unix microseconds, oldest first, at most the budget's max.
ALTER TABLE threads ADD COLUMN wake_log TEXT NOT NULL DEFAULT '';
-- max_concurrent_wakes: the threads waiting for a wake slot of their agent, served most
-- urgent first, then in the order they began to wait.
CREATE TABLE wake_queue (
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    priority_rank INTEGER NOT NULL,
    queued_at   INTEGER NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id)
);
CREATE INDEX wake_queue_order ON wake_queue (agent, priority_rank DESC, queued_at, resource_id, thread_id);
-- An agent's open runs by origin: the count of its wakes in progress.
CREATE INDEX runs_open_agent ON runs (agent, origin, lease_until) WHERE status = 'open';

-- +goose Down
DROP INDEX runs_open_agent;
DROP TABLE wake_queue;
ALTER TABLE threads DROP COLUMN wake_log;
