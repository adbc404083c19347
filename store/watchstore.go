package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// maxWatchKeys bounds one lookup (an event's keys; a longer list is read in parts).
const maxWatchKeys = 500

var _ watch.Store = (*Watches)(nil)

const watchColumns = `id, agent, resource_id, thread_id, source, connector, resource, kinds, priority, forever,
	reply_id, created_at, expires_at, ended_at, end_reason`

// maxListWatches caps one page of ListWatches (and is the page when the filter names none).
const maxListWatches = 500

type watchRow struct {
	ID        string        `db:"id"`
	Agent     string        `db:"agent"`
	Resource  string        `db:"resource_id"`
	Thread    string        `db:"thread_id"`
	Source    string        `db:"source"`
	Connector string        `db:"connector"`
	Watched   string        `db:"resource"`
	Kinds     string        `db:"kinds"`
	Priority  string        `db:"priority"`
	Forever   int64         `db:"forever"`
	ReplyID   string        `db:"reply_id"`
	CreatedAt int64         `db:"created_at"`
	ExpiresAt int64         `db:"expires_at"`
	EndedAt   sql.NullInt64 `db:"ended_at"`
	EndReason string        `db:"end_reason"`
}

func (r watchRow) watch() watch.Watch {
	w := watch.Watch{ID: r.ID, Thread: inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread},
		Source: r.Source, Connector: r.Connector, Resource: r.Watched, Priority: inbox.Priority(r.Priority),
		Forever: r.Forever != 0, ReplyID: r.ReplyID, CreatedAt: fromMicros(r.CreatedAt), ExpiresAt: fromMicros(r.ExpiresAt),
		EndedAt: fromNullMicros(r.EndedAt), EndReason: r.EndReason}
	_ = json.Unmarshal([]byte(r.Kinds), &w.Kinds) // written by CreateWatch from a []string
	return w
}

func watchesOf(rows []watchRow) []watch.Watch {
	out := make([]watch.Watch, len(rows))
	for i, r := range rows {
		out[i] = r.watch()
	}
	return out
}

// checkWatch refuses what the indexes cannot hold (PostgreSQL bounds a B-tree entry):
// the fronts check requests first, so this guards the store's own invariants.
func checkWatch(w watch.Watch) error {
	var errs []error
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"id", w.ID, inbox.MaxKeyBytes},
		{"thread.agent", w.Thread.Agent, inbox.MaxIDBytes},
		{"thread.resourceId", w.Thread.Resource, inbox.MaxIDBytes},
		{"thread.threadId", w.Thread.Thread, inbox.MaxIDBytes},
		{"source", w.Source, inbox.MaxLabelBytes},
		{"connector", w.Connector, inbox.MaxLabelBytes},
		{"resource", w.Resource, watch.MaxResourceBytes},
		{"replyId", w.ReplyID, inbox.MaxKeyBytes},
	} {
		if len(f.v) > f.max {
			errs = append(errs, fmt.Errorf("%s: %d bytes, over the limit of %d", f.name, len(f.v), f.max))
		}
	}
	if w.ID == "" || w.Thread.Agent == "" || w.Thread.Resource == "" || w.Thread.Thread == "" || w.Source == "" || w.Resource == "" {
		errs = append(errs, errors.New("id, thread, source and resource are required"))
	}
	if len(w.Kinds) > watch.MaxKinds || slices.ContainsFunc(w.Kinds, func(k string) bool { return len(k) > watch.MaxKindBytes }) {
		errs = append(errs, fmt.Errorf("kinds: at most %d of at most %d bytes", watch.MaxKinds, watch.MaxKindBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %s", watch.ErrInvalid, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// CreateWatch inserts w unless its thread has a live watch of the same key (then it
// answers that one), or w's agent holds maxPerAgent live watches (watch.ErrTooMany).
func (s *Watches) CreateWatch(ctx context.Context, w watch.Watch, maxPerAgent int) (watch.Watch, bool, error) {
	w.ID, w.Source, w.Connector, w.Resource = cleanText(w.ID), cleanText(w.Source), cleanText(w.Connector), cleanText(w.Resource)
	w.Thread = inbox.ThreadKey{Agent: cleanText(w.Thread.Agent), Resource: cleanText(w.Thread.Resource), Thread: cleanText(w.Thread.Thread)}
	if err := checkWatch(w); err != nil {
		return watch.Watch{}, false, fmt.Errorf("create watch: %w", err)
	}
	kinds := make([]string, len(w.Kinds))
	for i, k := range w.Kinds {
		kinds[i] = cleanText(k)
	}
	if w.Kinds == nil {
		kinds = nil
	}
	kindsJSON, err := json.Marshal(kinds)
	if err != nil {
		return watch.Watch{}, false, fmt.Errorf("create watch: encode kinds: %w", err)
	}
	forever := 0
	if w.Forever {
		forever = 1
	}
	k := w.Thread
	var row watchRow
	var created bool
	err = s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if s.driver == DriverPostgres {
			// The per-agent cap counts, then inserts: concurrent creates of one agent (on
			// any replica) must not both see room for one more. SQLite has one writer.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "watches\x1f"+k.Agent); err != nil {
				return fmt.Errorf("lock the agent's watches: %w", err)
			}
		}
		err := tx.GetContext(ctx, &row, s.q(`SELECT `+watchColumns+` FROM watches WHERE agent = ? AND resource_id = ?
			AND thread_id = ? AND match_key = ? AND ended_at IS NULL`), k.Agent, k.Resource, k.Thread, w.Key())
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("look up the thread's watch: %w", err)
		}
		var n int
		// Counted up to the cap only: a create reads at most max_per_agent index entries.
		if err := tx.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM (SELECT 1 FROM watches WHERE agent = ? AND ended_at IS NULL LIMIT ?) AS live`),
			k.Agent, maxPerAgent); err != nil {
			return fmt.Errorf("count the agent's watches: %w", err)
		}
		if n >= maxPerAgent {
			return fmt.Errorf("agent %s holds %d: %w", k.Agent, n, watch.ErrTooMany)
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO watches (id, agent, resource_id, thread_id, source, connector,
			resource, match_key, kinds, priority, forever, reply_id, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			w.ID, k.Agent, k.Resource, k.Thread, w.Source, w.Connector, w.Resource, w.Key(), string(kindsJSON),
			cleanText(string(w.Priority)), forever, cleanText(w.ReplyID), micros(w.CreatedAt), micros(w.ExpiresAt))
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// Only the id can collide here: the thread's live watch of this key was looked
			// for under the lock.
			return fmt.Errorf("%w: id %s is taken", watch.ErrInvalid, w.ID)
		}
		created = true
		return tx.GetContext(ctx, &row, s.q(`SELECT `+watchColumns+` FROM watches WHERE id = ?`), w.ID)
	})
	if err != nil {
		return watch.Watch{}, false, fmt.Errorf("create watch of %s %s for %s: %w", w.Source, w.Resource, k, err)
	}
	return row.watch(), created, nil
}

// Watch reads one watch.
func (s *Watches) Watch(ctx context.Context, id string) (watch.Watch, error) {
	var row watchRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+watchColumns+` FROM watches WHERE id = ?`), cleanText(id))
	if errors.Is(err, sql.ErrNoRows) {
		return watch.Watch{}, fmt.Errorf("watch %s: %w", id, inbox.ErrNotFound)
	}
	if err != nil {
		return watch.Watch{}, fmt.Errorf("read watch %s: %w", id, err)
	}
	return row.watch(), nil
}

// ListWatches lists newest first (by id: ids are time-ordered).
func (s *Watches) ListWatches(ctx context.Context, f watch.Filter) (watch.Page, error) {
	var w where
	if f.Thread != nil {
		w.add("agent = ? AND resource_id = ? AND thread_id = ?", f.Thread.Agent, f.Thread.Resource, f.Thread.Thread)
	}
	for _, c := range []struct{ col, v string }{{"agent", f.Agent}, {"source", f.Source}, {"connector", f.Connector},
		{"resource", f.Resource}} {
		if c.v != "" {
			w.add(c.col+" = ?", c.v)
		}
	}
	switch f.Status {
	case watch.StatusLive:
		w.add("ended_at IS NULL")
	case watch.StatusEnded:
		w.add("ended_at IS NOT NULL")
	case "":
	default:
		return watch.Page{}, fmt.Errorf("list watches: %w: status: want live or ended", watch.ErrInvalid)
	}
	if f.Cursor != "" {
		w.add("id < ?", f.Cursor)
	}
	limit := f.Limit
	if limit <= 0 || limit > maxListWatches {
		limit = maxListWatches
	}
	var rows []watchRow
	if err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+watchColumns+` FROM watches`+w.sql()+
		fmt.Sprintf(` ORDER BY id DESC LIMIT %d`, limit+1)), w.args...); err != nil {
		return watch.Page{}, fmt.Errorf("list watches: %w", err)
	}
	var page watch.Page
	if len(rows) > limit {
		rows = rows[:limit]
		page.Next = rows[limit-1].ID
	}
	page.Watches = watchesOf(rows)
	return page, nil
}

// EndWatch ends a live watch: of concurrent ends (an expiry, a terminal event, a delete)
// exactly one reports ended.
func (s *Watches) EndWatch(ctx context.Context, id, reason string, now time.Time) (watch.Watch, bool, error) {
	var row watchRow
	var ended bool
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		if ended, err = s.endWatch(ctx, tx, id, reason, now); err != nil {
			return err
		}
		err = tx.GetContext(ctx, &row, s.q(`SELECT `+watchColumns+` FROM watches WHERE id = ?`), cleanText(id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("watch %s: %w", id, inbox.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return watch.Watch{}, false, fmt.Errorf("end watch %s: %w", id, err)
	}
	return row.watch(), ended, nil
}

// endWatch is the conditional end: true when this call is what ended the watch.
func (s *core) endWatch(ctx context.Context, tx *sqlx.Tx, id, reason string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, s.q(`UPDATE watches SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL`),
		micros(now), cleanText(reason), cleanText(id))
	if err != nil {
		return false, fmt.Errorf("end watch %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("end watch %s: %w", id, err)
	}
	return n > 0, nil
}

// qLiveWatches looks up the not-ended watches of a JSON array of keys through
// watches_live (SQLite): one statement text for any number of keys, so it stays prepared
// (parsing it anew cost more than the lookup).
const qLiveWatches = `SELECT ` + watchColumns + ` FROM watches
	WHERE match_key IN (SELECT value FROM json_each(?)) AND ended_at IS NULL`

// liveWatchesQuery is the lookup of keys in the store's dialect.
func (s *Watches) liveWatchesQuery(keys []string) (string, []any, error) {
	if s.driver == DriverSQLite {
		b, err := json.Marshal(keys)
		return qLiveWatches, []any{string(b)}, err
	}
	q, args, err := sqlx.In(`SELECT `+watchColumns+` FROM watches WHERE match_key IN (?) AND ended_at IS NULL`, keys)
	return s.q(q), args, err
}

// LiveWatches are the not-ended watches of any of keys (expired or not), by id.
func (s *Watches) LiveWatches(ctx context.Context, keys []string) ([]watch.Watch, error) {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []watch.Watch
	for len(keys) > 0 {
		part := keys[:min(len(keys), maxWatchKeys)]
		keys = keys[len(part):]
		q, args, err := s.liveWatchesQuery(part)
		if err != nil {
			return nil, fmt.Errorf("look up watches: %w", err)
		}
		var rows []watchRow
		if err := s.readSelect(ctx, &rows, q, args...); err != nil {
			return nil, fmt.Errorf("look up watches: %w", err)
		}
		out = append(out, watchesOf(rows)...)
	}
	slices.SortFunc(out, func(a, b watch.Watch) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

const qDueWatches = `SELECT ` + watchColumns + ` FROM watches WHERE ended_at IS NULL AND expires_at <= ?
	ORDER BY expires_at, id LIMIT ?`

// DueWatches are up to limit not-ended watches expired at now, soonest first.
func (s *Watches) DueWatches(ctx context.Context, now time.Time, limit int) ([]watch.Watch, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []watchRow
	if err := s.r.SelectContext(ctx, &rows, s.q(qDueWatches), micros(now), limit); err != nil {
		return nil, fmt.Errorf("list due watches: %w", err)
	}
	return watchesOf(rows), nil
}

// SeenRepo records that connector received a verified delivery for repo (owner/name).
// Most deliveries are of a repository already seen: a read answers those, so the
// webhook path writes once per repository, not once per delivery.
func (s *SeenRepos) SeenRepo(ctx context.Context, connector, repo string, now time.Time) error {
	connector, repo = cleanText(connector), strings.ToLower(cleanText(repo))
	if repo == "" || len(repo) > watch.MaxResourceBytes || connector == "" || len(connector) > inbox.MaxLabelBytes {
		return fmt.Errorf("record repository of connector %q: %w: repository or connector name empty or too long", connector, watch.ErrInvalid)
	}
	if seen, err := s.RepoSeen(ctx, connector, repo); err != nil || seen {
		return err
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO connector_repos (connector, repo, first_seen_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`), connector, repo, micros(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("record repository %s of connector %s: %w", repo, connector, err)
	}
	return nil
}

// RepoSeen reports whether connector has received a verified delivery for repo.
func (s *SeenRepos) RepoSeen(ctx context.Context, connector, repo string) (bool, error) {
	var n int
	err := s.r.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM connector_repos WHERE connector = ? AND repo = ?`),
		cleanText(connector), strings.ToLower(cleanText(repo)))
	if err != nil {
		return false, fmt.Errorf("look up repository %s of connector %s: %w", repo, connector, err)
	}
	return n > 0, nil
}
