package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/signalgate/signalgate/service"
)

// lockKeepAlive is how often a held lock's connection is checked.
const lockKeepAlive = 10 * time.Second

// AdvisoryLocker hands out PostgreSQL session advisory locks, each on a dedicated
// connection: the lock lives exactly as long as that session, so a replica that dies
// (or loses its connection) frees it and another replica's next TryLock takes over.
// It implements the email poller's Lock, keyed by "email/<connector>/<mailbox>".
type AdvisoryLocker struct {
	dsn string
	log *slog.Logger
}

// NewAdvisoryLocker returns a locker connecting to dsn.
func NewAdvisoryLocker(dsn string, log *slog.Logger) *AdvisoryLocker {
	return &AdvisoryLocker{dsn: dsn, log: log.With("component", "advisory_lock")}
}

// TryLock takes key's lock without waiting. ok is false when another session holds it.
// release unlocks and closes the connection; it is safe to call more than once.
func (l *AdvisoryLocker) TryLock(ctx context.Context, key string) (func(), bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, l.dsn)
	if err != nil {
		return nil, false, fmt.Errorf("connect %s: %w", redactPostgresDSN(l.dsn), scrub(err, postgresSecrets(l.dsn)))
	}
	var ok bool
	// Advisory locks are per database: the schema keeps deployments sharing one apart.
	// hashtextextended maps the key to the bigint lock space; a collision only makes two
	// mailboxes share a poller, never two pollers share a mailbox.
	if err := conn.QueryRow(cctx, `SELECT pg_try_advisory_lock(hashtextextended(current_schema() || '/' || $1, 0))`, key).Scan(&ok); err != nil {
		_ = conn.Close(context.Background())
		return nil, false, fmt.Errorf("try advisory lock %q: %w", key, err)
	}
	if !ok {
		_ = conn.Close(context.Background())
		return nil, false, nil
	}
	var keeper service.StartStop
	_ = keeper.Start(context.Background(), func(ctx context.Context) { l.keepAlive(ctx, conn, key) })
	var once sync.Once
	release := func() {
		once.Do(func() {
			_ = keeper.Stop(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Closing the session frees the lock even if the unlock fails.
			_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended(current_schema() || '/' || $1, 0))`, key)
			_ = conn.Close(ctx)
		})
	}
	return release, true, nil
}

// keepAlive pings the session so a dead connection is noticed (and logged) while the
// lock is held; the server has freed the lock by then.
func (l *AdvisoryLocker) keepAlive(ctx context.Context, conn *pgx.Conn, key string) {
	t := time.NewTicker(lockKeepAlive)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			l.log.Error("advisory lock session lost; another replica may take the lock", "key", key, "error", err.Error())
			return
		}
	}
}
