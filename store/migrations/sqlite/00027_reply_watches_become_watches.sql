-- +goose Up
-- Reply watches (a reply sent with watch: true) become watches of their conversation: the
-- Slack thread (or the channel of a top-level message), the GitHub issue or pull request,
-- the email thread's root Message-ID, in watch.Resource's canonical form. They live the
-- default 7 days from when they were made; the sweep ends older ones and tells the thread.
INSERT INTO watches (id, agent, resource_id, thread_id, source, connector, resource, match_key,
    kinds, priority, forever, reply_id, created_at, expires_at)
SELECT 'w-0-' || reply_id, agent, resource_id, thread_id, source, connector, resource,
    source || char(31) || connector || char(31) || resource,
    'null', '', 0, reply_id, created_at, created_at + 604800000000
FROM (
    SELECT rw.agent, rw.resource_id, rw.thread_id, rw.source, rw.connector, rw.reply_id, rw.created_at,
        CASE rw.source
            WHEN 'slack' THEN upper(json_extract(r.reply_to, '$.channel')) ||
                CASE WHEN coalesce(json_extract(r.reply_to, '$.threadTs'), '') <> ''
                    THEN '/' || json_extract(r.reply_to, '$.threadTs') ELSE '' END
            WHEN 'github' THEN lower(json_extract(r.reply_to, '$.repo')) || '#' || json_extract(r.reply_to, '$.number')
            WHEN 'email' THEN trim(coalesce(nullif(json_extract(r.reply_to, '$.references[0]'), ''),
                json_extract(r.reply_to, '$.messageId')), '<> ')
        END AS resource
    FROM reply_watches rw JOIN replies r ON r.id = rw.reply_id
) AS moved
WHERE resource IS NOT NULL AND resource <> ''
ON CONFLICT DO NOTHING;
DROP TABLE reply_watches;

-- +goose Down
CREATE TABLE reply_watches (
    place_key   TEXT NOT NULL,
    agent       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    source      TEXT NOT NULL,
    connector   TEXT NOT NULL,
    reply_id    TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (place_key, agent, resource_id, thread_id)
);
CREATE INDEX reply_watches_thread ON reply_watches (agent, resource_id, thread_id);
