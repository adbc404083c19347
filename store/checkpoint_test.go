package store

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
)

// The committer's commits never copy the WAL into the database file (SQLite's automatic
// checkpoint would, every 1000 pages, inside the batch everyone queued behind waits
// for); the checkpointer does, once checkpointJobs writes have committed.
func TestCheckpointsRunOffTheCommitter(t *testing.T) {
	s := openCommitTest(t)
	type run struct{ frames, copied int64 }
	ran := make(chan run, 4)
	s.ckpt.ran = func(frames, copied int64) { ran <- run{frames, copied} }
	var path string
	if err := s.w.Get(&path, `SELECT file FROM pragma_database_list WHERE name = 'main'`); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// 16 KiB rows: a few pages each, past SQLite's 1000-page threshold well before
	// checkpointJobs writes.
	value := strings.Repeat("v", 16<<10)
	put := func(i int) {
		t.Helper()
		err := s.inTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, i, value)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range checkpointJobs - 1 {
		put(i)
	}
	if got := size(); got != before {
		t.Fatalf("database file grew from %d to %d bytes: a commit checkpointed the WAL", before, got)
	}
	select {
	case r := <-ran:
		t.Fatalf("checkpoint after %d writes (%+v), want none before %d", checkpointJobs-1, r, checkpointJobs)
	default:
	}
	put(checkpointJobs)
	r := <-ran
	if r.frames < checkpointJobs || r.copied != r.frames {
		t.Fatalf("checkpoint copied %d of %d WAL frames, want all of at least %d", r.copied, r.frames, checkpointJobs)
	}
	if got := size(); got <= before+int64(checkpointJobs)*int64(len(value)) {
		t.Fatalf("database file is %d bytes after the checkpoint, want the rows copied in (was %d)", got, before)
	}
}

func TestWriterKeepsSavepointJournalsInMemory(t *testing.T) {
	s := openCommitTest(t)
	// temp_store=MEMORY (2): each batch's per-caller savepoints journal in memory, not
	// in a temporary file written a page at a time.
	var store string
	if err := s.w.Get(&store, `PRAGMA temp_store`); err != nil {
		t.Fatal(err)
	}
	if store != "2" {
		t.Fatalf("writer runs temp_store=%s, want 2 (memory)", store)
	}
}
