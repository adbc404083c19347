package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

var _ reply.Watches = (*Store)(nil)

// maxWatchKeys bounds one lookup (an event's items; a longer list is read in parts).
const maxWatchKeys = 500

// WatchConversation makes k hear further messages of to's conversation, unless k
// watches reply.MaxWatchesPerThread conversations already (false). Idempotent.
func (s *Store) WatchConversation(ctx context.Context, k inbox.ThreadKey, to reply.To, replyID string, now time.Time) (bool, error) {
	key, ok := to.WatchKey()
	if !ok {
		return false, fmt.Errorf("watch reply %s: its place names no conversation", replyID)
	}
	added := false
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var exists, n int
		if err := tx.GetContext(ctx, &exists, s.q(`SELECT COUNT(*) FROM reply_watches
			WHERE place_key = ? AND agent = ? AND resource_id = ? AND thread_id = ?`), key, k.Agent, k.Resource, k.Thread); err != nil {
			return err
		}
		if exists > 0 {
			added = true
			return nil
		}
		if err := tx.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM reply_watches
			WHERE agent = ? AND resource_id = ? AND thread_id = ?`), k.Agent, k.Resource, k.Thread); err != nil {
			return err
		}
		if n >= reply.MaxWatchesPerThread {
			return nil
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO reply_watches (place_key, agent, resource_id, thread_id, source,
			connector, reply_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			key, k.Agent, k.Resource, k.Thread, cleanText(to.Source), cleanText(to.Connector), cleanText(replyID), micros(now))
		added = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record watch of reply %s: %w", replyID, err)
	}
	return added, nil
}

// Watchers lists, per place key (reply.To.WatchKey), the threads watching it.
func (s *Store) Watchers(ctx context.Context, keys []string) (map[string][]inbox.ThreadKey, error) {
	out := map[string][]inbox.ThreadKey{}
	for len(keys) > 0 {
		part := keys[:min(len(keys), maxWatchKeys)]
		keys = keys[len(part):]
		q, args, err := sqlx.In(`SELECT place_key, agent, resource_id, thread_id FROM reply_watches
			WHERE place_key IN (?) ORDER BY place_key, created_at, agent, resource_id, thread_id`, part)
		if err != nil {
			return nil, fmt.Errorf("look up watches: %w", err)
		}
		var rows []struct {
			Key      string `db:"place_key"`
			Agent    string `db:"agent"`
			Resource string `db:"resource_id"`
			Thread   string `db:"thread_id"`
		}
		if err := s.r.SelectContext(ctx, &rows, s.q(q), args...); err != nil {
			return nil, fmt.Errorf("look up watches: %w", err)
		}
		for _, r := range rows {
			out[r.Key] = append(out[r.Key], inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread})
		}
	}
	return out, nil
}
