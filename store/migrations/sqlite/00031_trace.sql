-- +goose Up
-- Trace context (W3C traceparent) of the span that stored an event, and of the event
-- that made a record; trace_links lists, space separated and bounded, the traceparents
-- of the events merged into the record later. Empty when tracing is off.
ALTER TABLE events ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN trace_links TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE records DROP COLUMN trace_links;
ALTER TABLE records DROP COLUMN trace_parent;
ALTER TABLE events DROP COLUMN trace_parent;
