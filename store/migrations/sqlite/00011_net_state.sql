-- +goose Up
-- Net-state lanes: a record may name the thing whose state it reports (net_key), that
-- state and the lane's rest state. A newer record of a lane supersedes the pending one
-- (superseded_by names it); the lane's pending record and newest record are found by
-- records_net_pending and records_net.
ALTER TABLE records ADD COLUMN net_key TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN net_state TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN rest_state TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';
CREATE INDEX records_net ON records (agent, resource_id, thread_id, net_key, created_at, id) WHERE net_key <> '';
CREATE INDEX records_net_pending ON records (agent, resource_id, thread_id, net_key, created_at, id)
    WHERE net_key <> '' AND status = 'pending';

-- The last state the model was told per thread and lane. A lane told its rest state
-- has no row (nothing told compares with the rest state alike); retention prunes rows
-- by told_at like terminal records.
CREATE TABLE net_states (
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    net_key     TEXT NOT NULL,
    told_state  TEXT NOT NULL,
    record_id   TEXT NOT NULL, -- the record that told it
    told_at     INTEGER NOT NULL,
    PRIMARY KEY (agent, resource_id, thread_id, net_key)
);
CREATE INDEX net_states_told ON net_states (told_at);

-- +goose Down
DROP TABLE net_states;
DROP INDEX records_net_pending;
DROP INDEX records_net;
ALTER TABLE records DROP COLUMN superseded_by;
ALTER TABLE records DROP COLUMN rest_state;
ALTER TABLE records DROP COLUMN net_state;
ALTER TABLE records DROP COLUMN net_key;
