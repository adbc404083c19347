-- +goose Up
-- cause is why the run a recovered signal was in flight in ended without finishing
-- (lease-expired, aborted, crashed): the redelivered signal carries it.
ALTER TABLE recoveries ADD COLUMN cause TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE recoveries DROP COLUMN cause;
