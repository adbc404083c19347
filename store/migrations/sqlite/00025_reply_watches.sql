-- +goose Up
-- Conversation watches: a reply sent with watch: true makes its thread hear further
-- messages of that conversation (the Slack thread, the GitHub issue or PR, the email
-- thread) even where no route matches. place_key is a fixed-length digest of the place
-- (reply.To.WatchKey), looked up for every routed item; a thread holds a bounded number.
CREATE TABLE reply_watches (
    place_key   TEXT NOT NULL,
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    source      TEXT NOT NULL,
    connector   TEXT NOT NULL,
    reply_id    TEXT NOT NULL,               -- the reply that asked for it
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (place_key, agent, resource_id, thread_id)
);
CREATE INDEX reply_watches_thread ON reply_watches (agent, resource_id, thread_id);

-- +goose Down
DROP TABLE reply_watches;
