-- +goose Up
-- Reply watches (a reply sent with watch: true) become watches of their conversation: the
-- Slack thread (or the channel of a top-level message), the GitHub issue or pull request,
-- the email thread's root Message-ID, in watch.Resource's canonical form. They live the
-- default 7 days from when they were made; the sweep ends older ones and tells the thread.
INSERT INTO watches (id, agent, resource_id, thread_id, source, connector, resource, match_key,
    kinds, priority, forever, reply_id, created_at, expires_at)
SELECT 'w-0-' || reply_id, agent, resource_id, thread_id, source, connector, resource,
    source || chr(31) || connector || chr(31) || resource,
    'null', '', 0, reply_id, created_at, created_at + 604800000000
FROM (
    SELECT rw.agent, rw.resource_id, rw.thread_id, rw.source, rw.connector, rw.reply_id, rw.created_at,
        CASE rw.source
            WHEN 'slack' THEN upper(r.reply_to::jsonb->>'channel') ||
                CASE WHEN coalesce(r.reply_to::jsonb->>'threadTs', '') <> ''
                    THEN '/' || (r.reply_to::jsonb->>'threadTs') ELSE '' END
            WHEN 'github' THEN lower(r.reply_to::jsonb->>'repo') || '#' || (r.reply_to::jsonb->>'number')
            WHEN 'email' THEN btrim(coalesce(nullif(r.reply_to::jsonb->'references'->>0, ''),
                r.reply_to::jsonb->>'messageId'), '<> ')
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
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (place_key, agent, resource_id, thread_id)
);
CREATE INDEX reply_watches_thread ON reply_watches (agent, resource_id, thread_id);
