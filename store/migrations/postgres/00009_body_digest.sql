-- +goose Up
-- A digest of a delivery's signed body (GitHub's carry no timestamp): a body replayed
-- under a new delivery id is a redelivery. It goes with its event, so retention
-- prunes it.
ALTER TABLE events ADD COLUMN body_digest TEXT;
CREATE UNIQUE INDEX events_body_digest ON events (source, connector, body_digest) WHERE body_digest IS NOT NULL;

-- +goose Down
DROP INDEX events_body_digest;
ALTER TABLE events DROP COLUMN body_digest;
