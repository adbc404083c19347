-- +goose Up
-- kind tells an approval (Approve/Decline buttons) from a question (a Mastra tool that
-- suspended for an answer, answered by an approver's threaded Slack reply); answer is
-- that reply's text. A reply finds its question by where the question was posted.
ALTER TABLE approvals ADD COLUMN kind TEXT NOT NULL DEFAULT 'approval';
ALTER TABLE approvals ADD COLUMN answer TEXT NOT NULL DEFAULT '';
CREATE INDEX approvals_question_message ON approvals (connector, channel, message_ts) WHERE kind = 'question';
CREATE INDEX approvals_question_thread ON approvals (connector, channel, thread_ts) WHERE kind = 'question';

-- +goose Down
DROP INDEX approvals_question_thread;
DROP INDEX approvals_question_message;
ALTER TABLE approvals DROP COLUMN answer;
ALTER TABLE approvals DROP COLUMN kind;
