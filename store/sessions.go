package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// TargetSession is the session a hosted runtime keeps for a thread.
type TargetSession struct {
	Thread    inbox.ThreadKey
	Kind      string // the target kind that created it
	ID        string // the runtime's session id
	CreatedAt time.Time
}

type sessionRow struct {
	Agent     string `db:"agent"`
	Resource  string `db:"resource"`
	Thread    string `db:"thread"`
	Kind      string `db:"kind"`
	SessionID string `db:"session_id"`
	CreatedAt int64  `db:"created_at"`
}

func (r sessionRow) session() TargetSession {
	return TargetSession{Thread: inbox.ThreadKey{Agent: r.Agent, Resource: r.Resource, Thread: r.Thread}, Kind: r.Kind,
		ID: r.SessionID, CreatedAt: fromMicros(r.CreatedAt)}
}

const sessionColumns = `agent, resource, thread, kind, session_id, created_at`

// TargetSession is k's session; ok is false when the thread has none.
func (s *Sessions) TargetSession(ctx context.Context, k inbox.ThreadKey) (TargetSession, bool, error) {
	var r sessionRow
	err := s.r.GetContext(ctx, &r, s.q(`SELECT `+sessionColumns+` FROM target_sessions WHERE agent = ? AND resource = ? AND thread = ?`),
		k.Agent, k.Resource, k.Thread)
	if errors.Is(err, sql.ErrNoRows) {
		return TargetSession{}, false, nil
	}
	if err != nil {
		return TargetSession{}, false, fmt.Errorf("read the session of %s: %w", k, err)
	}
	return r.session(), true, nil
}

// SessionThread is the thread of agentID whose session is id; ok is false for a session
// the gateway did not create (or forgot).
func (s *Sessions) SessionThread(ctx context.Context, agentID, id string) (TargetSession, bool, error) {
	var r sessionRow
	err := s.r.GetContext(ctx, &r, s.q(`SELECT `+sessionColumns+` FROM target_sessions WHERE agent = ? AND session_id = ?`), agentID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return TargetSession{}, false, nil
	}
	if err != nil {
		return TargetSession{}, false, fmt.Errorf("find the thread of session %s: %w", id, err)
	}
	return r.session(), true, nil
}

// SaveTargetSession records ts as its thread's session unless the thread has one
// already (another replica created it first): the session kept is returned, and saved
// reports whether it is ts.
func (s *Sessions) SaveTargetSession(ctx context.Context, ts TargetSession) (TargetSession, bool, error) {
	k := ts.Thread
	res, err := s.w.ExecContext(ctx, s.q(`INSERT INTO target_sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent, resource, thread) DO NOTHING`),
		k.Agent, k.Resource, k.Thread, cleanText(ts.Kind), cleanText(ts.ID), micros(ts.CreatedAt))
	if err != nil {
		return TargetSession{}, false, fmt.Errorf("save the session of %s: %w", k, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return ts, true, nil
	}
	kept, ok, err := s.TargetSession(ctx, k)
	if err == nil && !ok {
		err = fmt.Errorf("save the session of %s: the row vanished", k)
	}
	return kept, false, err
}

// ForgetTargetSession drops k's session if it is still id (a session the runtime ended
// for good): the thread's next signal creates another.
func (s *Sessions) ForgetTargetSession(ctx context.Context, k inbox.ThreadKey, id string) error {
	if _, err := s.w.ExecContext(ctx, s.q(`DELETE FROM target_sessions WHERE agent = ? AND resource = ? AND thread = ? AND session_id = ?`),
		k.Agent, k.Resource, k.Thread, id); err != nil {
		return fmt.Errorf("forget the session of %s: %w", k, err)
	}
	return nil
}
