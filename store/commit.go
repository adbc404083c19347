package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/signalgate/signalgate/service"
)

// Group commit (SQLite). A 2xx means the event is on disk, so the writer commits with
// synchronous=FULL: an fsync of the WAL per commit. Rather than one fsync per request,
// the write transactions of concurrent callers run one after another inside a single
// immediate transaction, each in its own savepoint, and share its commit. A batch is
// whatever queued while the previous one was committing (up to maxBatch): no timer,
// so a lone request waits for nobody. Each caller is answered after the commit that
// holds its writes; one caller's error rolls back only its savepoint, and a failed
// commit fails only the callers of that batch.
//
// Ingest, the one write a stranger can drive at will, queues in its own lane: the
// dispatcher's claims and completions (and the agent API's writes) go first in every
// batch, so a flood of webhooks delays their delivery by at most the batch in progress.

const (
	// maxBatch bounds the callers sharing one commit (and so one batch's latency).
	maxBatch = 64
	// batchTimeout bounds one batch's transaction; busy_timeout is 10 s.
	batchTimeout = 30 * time.Second
)

var errStoreClosed = errors.New("store closed")

// txFunc is one caller's part of a write transaction. ctx is the batch's: it outlives
// the caller's request, so a client hanging up cannot interrupt the shared transaction.
type txFunc func(ctx context.Context, tx *sqlx.Tx) error

type commitJob struct {
	ctx  context.Context // the caller's: a job whose caller gave up before it ran is skipped
	keep bool            // never skipped once queued (see core.inRecordTx)
	fn   txFunc
	done chan error // buffered: the committer never blocks on a caller
}

// committer owns the goroutine that runs batches on the writer connection.
type committer struct {
	w    *sqlx.DB
	jobs chan *commitJob // first in every batch
	bulk chan *commitJob // ingest: fills the rest
	service.StartStop
	// life ends when the store closes; ended is closed once the loop returned.
	life  context.Context
	ended <-chan struct{}
	// wrote is told every checkpointJobs committed jobs (the checkpointer's kick).
	wrote     func()
	sinceKick int
	// Test hooks: queued sees each job taken, batched each batch's size.
	queued  func()
	batched func(size int)
}

func newCommitter(w *sqlx.DB, wrote func()) *committer {
	c := &committer{w: w, jobs: make(chan *commitJob, maxBatch), bulk: make(chan *commitJob, maxBatch),
		wrote: wrote, queued: func() {}, batched: func(int) {}}
	_ = c.Start(context.Background(), c.loop) // a new StartStop always starts
	c.life, c.ended = c.Context(), c.Stopped()
	return c
}

// run queues fn for the next batch and waits for that batch's commit; bulk puts it in
// the ingest lane. ctx bounds the wait for a place in the queue; once queued, a job
// whose ctx ended before its batch ran is skipped unless keep is set.
func (c *committer) run(ctx context.Context, bulk, keep bool, fn txFunc) error {
	j := &commitJob{ctx: ctx, keep: keep, fn: fn, done: make(chan error, 1)}
	lane := c.jobs
	if bulk {
		lane = c.bulk
	}
	select {
	case lane <- j:
	case <-ctx.Done():
		return fmt.Errorf("wait for the writer: %w", ctx.Err())
	case <-c.life.Done():
		return errStoreClosed
	}
	c.queued()
	// Once queued the job may already be in a transaction: its outcome is only known
	// after the commit, so wait for it whatever ctx does.
	select {
	case err := <-j.done:
		return err
	case <-c.ended:
		// The loop answers every job it took before it ends.
		select {
		case err := <-j.done:
			return err
		default:
			return errStoreClosed
		}
	}
}

// close stops taking jobs, lets the batch in progress finish and waits for it.
func (c *committer) close() { _ = c.Stop(context.Background()) }

func (c *committer) loop(ctx context.Context) {
	batch := make([]*commitJob, 0, maxBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-c.jobs:
			batch = append(batch[:0], j)
			batch = drain(batch, c.jobs)
		case j := <-c.bulk:
			// Whoever queued in the first lane meanwhile still goes first.
			batch = drain(batch[:0], c.jobs)
			batch = append(batch, j)
		}
		// Everyone who queued while the last batch committed joins this one, the
		// ingest lane last.
		batch = drain(batch, c.bulk)
		c.commit(batch)
		clear(batch)
	}
}

// drain adds what is queued in lane, up to maxBatch.
func drain(batch []*commitJob, lane chan *commitJob) []*commitJob {
	for len(batch) < maxBatch {
		select {
		case j := <-lane:
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// commit runs one batch in one transaction and answers every job in it.
func (c *committer) commit(batch []*commitJob) {
	c.batched(len(batch))
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	results := make([]error, len(batch))
	answer := func(batchErr error) {
		for i, j := range batch {
			if batchErr != nil && results[i] == nil {
				results[i] = batchErr
			}
			j.done <- results[i]
		}
	}
	tx, err := c.w.BeginTxx(ctx, nil)
	if err != nil {
		answer(fmt.Errorf("begin transaction: %w", err))
		return
	}
	ran := 0
	scope := &jobScope{tx: tx, lone: len(batch) == 1}
	defer scope.close()
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil && !j.keep {
			results[i] = fmt.Errorf("wait for the writer: %w", err)
			continue
		}
		if err := scope.run(ctx, j.fn); err != nil {
			results[i] = err
			if errors.Is(err, errTxLost) {
				// The transaction is gone (an I/O error, an interrupt): nothing in
				// this batch was written.
				_ = tx.Rollback()
				answer(err)
				return
			}
			continue
		}
		ran++
	}
	if ran == 0 {
		_ = tx.Rollback()
		answer(nil)
		return
	}
	if err := tx.Commit(); err != nil {
		answer(fmt.Errorf("commit: %w", err))
		return
	}
	answer(nil)
	if c.sinceKick += ran; c.sinceKick >= checkpointJobs {
		c.sinceKick = 0
		c.wrote()
	}
}

var errTxLost = errors.New("write transaction aborted")

// jobScope runs the jobs of one batch so that a job's failure undoes only its own
// writes. A batch of one needs no savepoint: its job failing leaves nothing that ran, and
// the batch rolls back. A larger batch prepares SAVEPOINT and RELEASE once, since
// modernc.org/sqlite parses an unprepared statement again on every run.
type jobScope struct {
	tx           *sqlx.Tx
	lone         bool
	set, release *sql.Stmt
}

func (s *jobScope) run(ctx context.Context, fn txFunc) error {
	if s.lone {
		return callJob(ctx, s.tx, fn)
	}
	if s.set == nil {
		set, err := s.tx.PrepareContext(ctx, `SAVEPOINT job`)
		if err != nil {
			return fmt.Errorf("%w: prepare savepoint: %w", errTxLost, err)
		}
		release, err := s.tx.PrepareContext(ctx, `RELEASE job`)
		if err != nil {
			_ = set.Close()
			return fmt.Errorf("%w: prepare release: %w", errTxLost, err)
		}
		s.set, s.release = set, release
	}
	if _, err := s.set.ExecContext(ctx); err != nil {
		return fmt.Errorf("%w: savepoint: %w", errTxLost, err)
	}
	if err := callJob(ctx, s.tx, fn); err != nil {
		if _, rerr := s.tx.ExecContext(ctx, `ROLLBACK TO job`); rerr != nil {
			return fmt.Errorf("%w: %w (roll back: %w)", errTxLost, err, rerr)
		}
		if _, rerr := s.release.ExecContext(ctx); rerr != nil {
			return fmt.Errorf("%w: %w (release: %w)", errTxLost, err, rerr)
		}
		return err
	}
	if _, err := s.release.ExecContext(ctx); err != nil {
		return fmt.Errorf("%w: release savepoint: %w", errTxLost, err)
	}
	return nil
}

// close frees the prepared statements (the transaction's end would too).
func (s *jobScope) close() {
	if s.set != nil {
		_ = s.set.Close()
		_ = s.release.Close()
	}
}

// callJob turns a panic in one caller's part into that caller's error: the committer
// serves everyone.
func callJob(ctx context.Context, tx *sqlx.Tx, fn txFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("write transaction panicked: %v", p)
		}
	}()
	return fn(ctx, tx)
}
