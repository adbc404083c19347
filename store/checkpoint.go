package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/signalgate/signalgate/service"
)

// Checkpoints (SQLite). SQLite's automatic checkpoint runs inside the commit that
// crosses its threshold: on the group committer, so every write queued behind that
// batch waited for a thousand pages to be copied into the database file and for its
// fsync. The writer connection turns it off and this goroutine, on a connection of its
// own, copies the WAL back in PASSIVE mode (it never waits for or blocks the writer or
// a reader) after every checkpointJobs committed writes. Durability is unchanged: a
// commit is on disk once its WAL frames are fsync'd, and a checkpoint fsyncs the
// database file before the WAL is reused.

// checkpointJobs is how many committed writes (an ingest, a dispatch pass's
// completion...) wait for the next checkpoint; a few hundred keep the WAL to a few
// megabytes under load, like SQLite's default of 1000 pages.
const checkpointJobs = 256

// checkpointTimeout bounds one checkpoint (a PASSIVE one never waits on locks).
const checkpointTimeout = time.Minute

type checkpointer struct {
	db   *sqlx.DB
	log  *slog.Logger
	kick chan struct{} // buffered 1: kicks while a checkpoint runs fold into the next
	service.StartStop
	// ran is a test hook: the WAL's frames and how many are now in the database file.
	ran func(walFrames, copied int64)
}

func newCheckpointer(db *sqlx.DB, log *slog.Logger) *checkpointer {
	c := &checkpointer{db: db, log: log, kick: make(chan struct{}, 1), ran: func(int64, int64) {}}
	_ = c.Start(context.Background(), c.loop) // a new StartStop always starts
	return c
}

// wrote asks for a checkpoint soon; it never blocks.
func (c *checkpointer) wrote() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		if err := c.checkpoint(); err != nil {
			// The next kick tries again; meanwhile the WAL only grows.
			c.log.Warn("wal checkpoint failed", "error", err.Error())
		}
	}
}

func (c *checkpointer) checkpoint() error {
	ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
	defer cancel()
	var busy, frames, copied int64
	if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("checkpoint the wal: %w", err)
	}
	c.ran(frames, copied)
	return nil
}

// close stops the loop after the checkpoint in progress and closes the connection.
func (c *checkpointer) close() error {
	_ = c.Stop(context.Background())
	return c.db.Close()
}
