-- +goose Up
-- attempts counts every attempt of a record, across redeliveries and its summary;
-- attempts_base is how many came before the current round (a redelivery or a delivered
-- summary starts one), which max_attempts and the backoff count from. operator_action
-- is the last thing an operator did to the record (a redelivery), kept beside the
-- policy's decision (reason) rather than over it.
ALTER TABLE records ADD COLUMN attempts_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN operator_action TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE records DROP COLUMN operator_action;
ALTER TABLE records DROP COLUMN attempts_base;
