-- +goose Up
-- Signal ids are unique per thread, not across the gateway: an agent's caller-chosen id
-- must neither collide with another agent's nor be silently dropped because of it.
ALTER TABLE signals DROP CONSTRAINT signals_id_key;
CREATE UNIQUE INDEX signals_thread_id ON signals (agent, resource_id, thread_id, id);
ALTER TABLE recoveries DROP CONSTRAINT recoveries_pkey;
ALTER TABLE recoveries ADD PRIMARY KEY (agent, resource_id, thread_id, signal_id);
DROP INDEX recoveries_thread;

-- +goose Down
CREATE INDEX recoveries_thread ON recoveries (agent, resource_id, thread_id);
ALTER TABLE recoveries DROP CONSTRAINT recoveries_pkey;
ALTER TABLE recoveries ADD PRIMARY KEY (signal_id);
DROP INDEX signals_thread_id;
ALTER TABLE signals ADD CONSTRAINT signals_id_key UNIQUE (id);
