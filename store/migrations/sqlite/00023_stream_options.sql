-- +goose Up
-- stream_options are the ifIdle.streamOptions a notification was created with (a JSON
-- object, '' for none): passed to a mastra target when the record wakes its thread.
ALTER TABLE records ADD COLUMN stream_options TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE records DROP COLUMN stream_options;
