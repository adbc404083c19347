package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
)

// openCommitTest opens a migrated SQLite store with a scratch table.
func openCommitTest(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Config{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "gc.db")}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return s
}

func insertKV(k string) txFunc {
	return func(ctx context.Context, tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, 'x')`, k)
		return err
	}
}

func keys(t *testing.T, s *DB) map[string]bool {
	t.Helper()
	var ks []string
	if err := s.r.Select(&ks, `SELECT k FROM kv`); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, k := range ks {
		out[k] = true
	}
	return out
}

// hold starts a write that blocks the committer until release is closed, then queues
// fns (fewer than maxBatch) behind it, so they all land in the next batch; it returns
// each fn's result.
func hold(t *testing.T, s *DB, fns []txFunc) []error {
	t.Helper()
	var sizes []int
	var mu sync.Mutex
	queued := make(chan struct{}, len(fns)+1)
	s.gc.queued = func() { queued <- struct{}{} }
	s.gc.batched = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.inTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
			close(started)
			<-release
			return insertKV("first")(ctx, tx)
		})
	}()
	<-started
	<-queued
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.inTx(context.Background(), fn) }()
	}
	for range fns {
		<-queued
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 2 || sizes[0] != 1 || sizes[1] != len(fns) {
		t.Fatalf("batch sizes %v, want [1 %d]: the queued writes did not share one commit", sizes, len(fns))
	}
	return errs
}

func TestGroupCommitSharesOneTransaction(t *testing.T) {
	s := openCommitTest(t)
	var fns []txFunc
	for i := range maxBatch - 1 {
		fns = append(fns, insertKV(fmt.Sprintf("k%d", i)))
	}
	for i, err := range hold(t, s, fns) {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := len(keys(t, s)); got != maxBatch {
		t.Fatalf("%d rows, want %d", got, maxBatch)
	}
}

func TestGroupCommitFailureIsTheCallersOwn(t *testing.T) {
	s := openCommitTest(t)
	boom := errors.New("boom")
	fns := []txFunc{
		insertKV("a"),
		func(ctx context.Context, tx *sqlx.Tx) error {
			// Writes, then fails: its write must not survive.
			if err := insertKV("doomed")(ctx, tx); err != nil {
				return err
			}
			return boom
		},
		func(context.Context, *sqlx.Tx) error { panic("poison") },
		insertKV("first"), // a constraint error: the earlier batch committed it
		insertKV("b"),
	}
	errs := hold(t, s, fns)
	if errs[0] != nil || errs[4] != nil {
		t.Fatalf("healthy writes failed: %v, %v", errs[0], errs[4])
	}
	if !errors.Is(errs[1], boom) || errs[2] == nil || errs[3] == nil {
		t.Fatalf("failing writes answered %v, %v, %v", errs[1], errs[2], errs[3])
	}
	got := keys(t, s)
	if !got["first"] || !got["a"] || !got["b"] || got["doomed"] || len(got) != 3 {
		t.Fatalf("rows %v, want first, a, b", got)
	}
}

// A batch of one runs without a savepoint: its failure still leaves none of its writes,
// and the writer is ready for the next batch.
func TestGroupCommitLoneFailureLeavesNothing(t *testing.T) {
	s := openCommitTest(t)
	boom := errors.New("boom")
	var sizes []int
	s.gc.batched = func(n int) { sizes = append(sizes, n) }
	err := s.inTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
		if err := insertKV("doomed")(ctx, tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("lone failing write answered %v", err)
	}
	if err := s.inTx(context.Background(), func(context.Context, *sqlx.Tx) error { panic("poison") }); err == nil {
		t.Fatal("a lone panicking write answered nil")
	}
	if err := s.inTx(context.Background(), insertKV("after")); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if got := keys(t, s); got["doomed"] || !got["after"] || len(got) != 1 {
		t.Fatalf("rows %v, want after", got)
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1 {
		t.Fatalf("batch sizes %v, want three batches of one", sizes)
	}
}

func TestGroupCommitLostTransactionFailsOnlyItsBatch(t *testing.T) {
	s := openCommitTest(t)
	fns := []txFunc{
		insertKV("a"),
		func(ctx context.Context, tx *sqlx.Tx) error {
			// Ends the shared transaction under everyone's feet (as an I/O error would).
			if _, err := tx.ExecContext(ctx, `ROLLBACK`); err != nil {
				return err
			}
			return errors.New("after rollback")
		},
		insertKV("b"),
	}
	for i, err := range hold(t, s, fns) {
		if err == nil {
			t.Fatalf("write %d reported committed, but its batch was rolled back", i)
		}
	}
	if got := keys(t, s); !got["first"] || len(got) != 1 {
		t.Fatalf("rows %v, want only the earlier batch's", got)
	}
	// The next batch commits normally.
	if err := s.inTx(context.Background(), insertKV("c")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, s); !got["c"] {
		t.Fatalf("rows %v: the batch after a lost one did not commit", got)
	}
}

// afterGivingUp queues write behind a batch that is held running, ends write's context
// while it waits, then lets the batch go; it returns write's result.
func afterGivingUp(t *testing.T, s *DB, write func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	started, release := make(chan struct{}), make(chan struct{})
	queued := make(chan struct{}, 2)
	s.gc.queued = func() { queued <- struct{}{} }
	go func() {
		_ = s.inTx(context.Background(), func(context.Context, *sqlx.Tx) error { close(started); <-release; return nil })
	}()
	<-started
	<-queued
	go func() { result <- write(ctx) }()
	<-queued
	cancel()
	close(release)
	return <-result
}

func TestGroupCommitSkipsCallersThatGaveUp(t *testing.T) {
	s := openCommitTest(t)
	err := afterGivingUp(t, s, func(ctx context.Context) error { return s.inTx(ctx, insertKV("late")) })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if got := keys(t, s); got["late"] {
		t.Fatal("a write whose caller gave up before its batch ran was committed")
	}
}

// TestGroupCommitKeepsPassRecords: a pass's record (what a target already accepted) is
// committed even when its caller's deadline passed while the batch ahead was running, so
// a slow writer delays the record instead of dropping it for the pass to be redone.
func TestGroupCommitKeepsPassRecords(t *testing.T) {
	s := openCommitTest(t)
	if err := afterGivingUp(t, s, func(ctx context.Context) error { return s.inRecordTx(ctx, insertKV("pass")) }); err != nil {
		t.Fatalf("record of a pass: %v", err)
	}
	if got := keys(t, s); !got["pass"] {
		t.Fatal("a pass's record was dropped because its caller's deadline passed in the queue")
	}
}

func TestWriterCommitsWithFullSync(t *testing.T) {
	s := openCommitTest(t)
	// FULL (2) fsyncs the WAL at every commit; NORMAL (1) only at checkpoints, which
	// loses acknowledged events on a power cut.
	var sync, mode string
	if err := s.w.Get(&sync, `PRAGMA synchronous`); err != nil {
		t.Fatal(err)
	}
	if err := s.w.Get(&mode, `PRAGMA journal_mode`); err != nil {
		t.Fatal(err)
	}
	if sync != "2" || mode != "wal" {
		t.Fatalf("writer runs synchronous=%s journal_mode=%s, want 2 (FULL) and wal", sync, mode)
	}
}

func TestCloseAnswersQueuedWrites(t *testing.T) {
	s := openCommitTest(t)
	started, release := make(chan struct{}), make(chan struct{})
	queued := make(chan struct{}, 2)
	s.gc.queued = func() { queued <- struct{}{} }
	first, second := make(chan error, 1), make(chan error, 1)
	go func() {
		first <- s.inTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
			close(started)
			<-release
			return insertKV("first")(ctx, tx)
		})
	}()
	<-started
	<-queued
	go func() { second <- s.inTx(context.Background(), insertKV("second")) }()
	<-queued
	closed := make(chan struct{})
	go func() { s.gc.close(); close(closed) }()
	close(release)
	<-closed
	if err := <-first; err != nil {
		t.Fatalf("the batch in progress at close: %v", err)
	}
	if err := <-second; err != nil && !errors.Is(err, errStoreClosed) {
		t.Fatalf("a write queued at close: %v", err)
	}
	if err := s.inTx(context.Background(), insertKV("after")); !errors.Is(err, errStoreClosed) {
		t.Fatalf("a write after close: %v, want store closed", err)
	}
}

func TestGroupCommitIngestQueuesLast(t *testing.T) {
	s := openCommitTest(t)
	queued := make(chan struct{}, 8)
	s.gc.queued = func() { queued <- struct{}{} }
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = s.inTx(context.Background(), func(context.Context, *sqlx.Tx) error { close(started); <-release; return nil })
	}()
	<-started
	<-queued
	var mu sync.Mutex
	var order []string
	record := func(name string) txFunc {
		return func(ctx context.Context, tx *sqlx.Tx) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return insertKV(name)(ctx, tx)
		}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.inIngestTx(context.Background(), record(fmt.Sprintf("ingest%d", i))) }()
		<-queued
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.inTx(context.Background(), record("dispatch")) }()
	<-queued
	close(release)
	wg.Wait()
	require := func(cond bool) {
		t.Helper()
		if !cond {
			t.Fatalf("order %v: the dispatcher's write must run before the queued ingests", order)
		}
	}
	require(len(order) == 4 && order[0] == "dispatch")
}
