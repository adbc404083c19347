package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkSQLiteFloor is the storage floor of one event through the gateway on this
// machine: the rows the pipeline writes for it (the event with a real GitHub body, its
// thread, its record; then the signal frame, the record's delivery and the attempt),
// written by hand with prepared statements on the gateway's own schema and pragmas, in
// batches of 64 (and 256; 8 KiB pages for comparison) per synchronous=FULL commit, checkpoints included (SQLite's automatic
// ones, on the same connection: the whole storage cost on one core). No HTTP, routing,
// JSON, savepoints or reads beyond the two the ingest makes: what the gateway's figures
// compare against.
func BenchmarkSQLiteFloor(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "cmd", "loadgen", "load", "payloads", "issue_comment.created.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		part  string
		batch int
		page  int
	}{{"ingest", 64, 4096}, {"full", 64, 4096}, {"full", 256, 4096}, {"full", 64, 8192}} {
		part, batch := c.part, c.batch
		b.Run(fmt.Sprintf("%s/batch=%d/page=%d", part, batch, c.page), func(b *testing.B) {
			cfg := storetest.SQLiteConfig(b)
			path := cfg.DSN
			cfg.DSN += fmt.Sprintf("?_pragma=page_size(%d)", c.page)
			storetest.Open(b, storetest.Backend{Name: "sqlite", Config: cfg})
			db, err := sqlx.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"+
				"&_pragma=synchronous(FULL)&_pragma=temp_store(2)&_txlock=immediate")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			ctx := context.Background()
			prep := func(q string) *sqlx.Stmt {
				st, err := db.PreparexContext(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				return st
			}
			insEvent := prep(`INSERT INTO events (id, source, connector, delivery_id, type, headers, body, received_at, status, error, replay_of, records, body_digest)
				VALUES (?, 'github', 'load', ?, 'issue_comment', '{"X-Github-Event":["issue_comment"]}', ?, ?, 'routed', '', NULL, 1, NULL) ON CONFLICT DO NOTHING`)
			touch := prep(`INSERT INTO threads (agent, resource_id, thread_id, created_at, updated_at) VALUES ('loadgen', ?, ?, ?, ?)
				ON CONFLICT (agent, resource_id, thread_id) DO UPDATE SET updated_at = excluded.updated_at`)
			presence := prep(`SELECT COUNT(*) FROM runs WHERE agent = 'loadgen' AND resource_id = ? AND thread_id = ? AND status = 'open' AND lease_until > ?`)
			insRecord := prep(`INSERT INTO records (id, agent, resource_id, thread_id, event_id, route, source, kind, priority, priority_rank, summary, payload,
				status, action, deliver_at, due_at, created_at, updated_at)
				VALUES (?, 'loadgen', ?, ?, ?, 'load-github', 'github', 'comment', 'medium', 2, ?, ?, 'pending', 'deliver', ?, ?, ?, ?)`)
			nextSeq := prep(`UPDATE threads SET last_seq = last_seq + 1 WHERE agent = 'loadgen' AND resource_id = ? AND thread_id = ? RETURNING last_seq`)
			insSignal := prep(`INSERT INTO signals (agent, resource_id, thread_id, seq, id, event, action, type, tag_name, contents, attributes, metadata, xml, record_ids, created_at)
				VALUES ('loadgen', ?, ?, ?, ?, 'signal', 'wake', 'notification', 'notification', ?, '{}', ?, ?, ?, ?)`)
			delivered := prep(`UPDATE records SET status = 'delivered', delivered_signal_id = ?, delivered_at = ?, updated_at = ?, due_at = NULL WHERE id = ? AND status = 'pending'`)
			attempt := prep(`INSERT INTO delivery_attempts (agent, resource_id, thread_id, target, signal_id, record_ids, attempt, outcome, attempted_at)
				VALUES ('loadgen', ?, ?, 'stream', ?, ?, 1, 'delivered', ?)`)
			summary := "jane commented on loadgen/r1#7: It looks like you accidently spelled 'commit' with two 't's."
			payload := `{"event":"issue_comment","repo":"loadgen/r1","number":7,"url":"https://github.com/loadgen/r1/issues/7","author":"jane"}`
			n := 0
			run := func(fn func(tx *sqlx.Tx, i int) error) {
				tx, err := db.BeginTxx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				for i := n; i < n+batch; i++ {
					if err := fn(tx, i); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			start, cpu0 := time.Now(), cpuTime(b)
			for b.Loop() {
				now := time.Now().UnixMicro()
				run(func(tx *sqlx.Tx, i int) error {
					repo := fmt.Sprintf("loadgen/r%d", i%100)
					id := fmt.Sprintf("ev%09d", i)
					if _, err := tx.Stmtx(insEvent).ExecContext(ctx, id, fmt.Sprintf("d-%d", i), body, now); err != nil {
						return err
					}
					if _, err := tx.Stmtx(touch).ExecContext(ctx, repo, repo, now, now); err != nil {
						return err
					}
					var c int
					if err := tx.Stmtx(presence).GetContext(ctx, &c, repo, repo, now); err != nil {
						return err
					}
					_, err := tx.Stmtx(insRecord).ExecContext(ctx, fmt.Sprintf("rec%09d", i), repo, repo, id, summary, payload, now, now, now, now)
					return err
				})
				if part == "full" {
					run(func(tx *sqlx.Tx, i int) error {
						repo := fmt.Sprintf("loadgen/r%d", i%100)
						var seq int64
						if err := tx.Stmtx(nextSeq).GetContext(ctx, &seq, repo, repo); err != nil {
							return err
						}
						sig := fmt.Sprintf("sig%09d", i)
						rec := fmt.Sprintf(`["rec%09d"]`, i)
						xml := `<notification id="rec" source="github" type="comment" kind="comment" priority="medium" status="delivered">` + summary + `</notification>`
						if _, err := tx.Stmtx(insSignal).ExecContext(ctx, repo, repo, seq, sig, summary, payload, xml, rec, now); err != nil {
							return err
						}
						if _, err := tx.Stmtx(delivered).ExecContext(ctx, sig, now, now, fmt.Sprintf("rec%09d", i)); err != nil {
							return err
						}
						_, err := tx.Stmtx(attempt).ExecContext(ctx, repo, repo, sig, rec, now)
						return err
					})
				}
				n += batch
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
			// CPU per event is what the machine's other load disturbs least.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(n), "cpu-µs/event")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
