-- +goose Up
-- How events.body is stored: '' as received, 'zstd' compressed. A column rather than
-- sniffing zstd's magic number: a received body may itself start with those bytes.
ALTER TABLE events ADD COLUMN body_encoding TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN body_encoding;
