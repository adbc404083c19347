-- +goose Up
-- In-flight recovery: a signal delivered into a run is in flight until that run finishes.
-- When a run ends by lease expiry or abort instead, its in-flight signals are listed here
-- (in the transaction that closes the run) and delivered again, marked recovered="true",
-- at the start of the thread's next run; the row goes in the transaction that logs the
-- redelivery.
CREATE TABLE recoveries (
    signal_id   TEXT PRIMARY KEY, -- the in-flight signal, as logged in signals
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL, -- the run that ended without finishing
    created_at  BIGINT NOT NULL
);
CREATE INDEX recoveries_thread ON recoveries (agent, resource_id, thread_id);
CREATE INDEX signals_run ON signals (run_id) WHERE run_id <> '';

-- +goose Down
DROP INDEX signals_run;
DROP TABLE recoveries;
