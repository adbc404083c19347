package store_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkThreadWork measures a dispatch pass's read of its work as it runs at a low
// rate: one new record on a thread that already delivered 1,000, read and then marked
// delivered. It reports the CPU of the read alone per record; a read that walked the
// thread's delivered history would grow with it.
func BenchmarkThreadWork(b *testing.B) {
	ctx := context.Background()
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			if be.Name == "sqlite" {
				be.Config = storetest.SQLiteConfig(b) // a fresh database for each run
			} else {
				be.Config = storetest.PostgresConfig(b, os.Getenv(storetest.PostgresEnv))
			}
			s := storetest.Open(b, be)
			queue := store.NewQueue(s)
			// The read runs on this goroutine (SQLite) or waits on it (PostgreSQL): the
			// thread's own CPU is the read's, not the checkpointer's or the collector's.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			if err != nil {
				b.Fatal(err)
			}
			svc := inbox.NewService(store.NewInbox(s), pol)
			i := 0
			pass := func() time.Duration {
				n := comment(fmt.Sprint("Jane commented ", i), fmt.Sprint("k", i), fmt.Sprint("c", i))
				n.Priority = inbox.PriorityUrgent
				ingest(b, svc, fmt.Sprint("d", i), n)
				i++
				cpu := threadCPU(b)
				w, err := queue.ThreadWork(ctx, thread, time.Now(), 50)
				took := threadCPU(b) - cpu
				if err != nil || len(w.Records) != 1 {
					b.Fatalf("work: %v, %d records", err, len(w.Records))
				}
				r := w.Records[0]
				o := delivery.Outcome{Thread: thread, Now: time.Now(), Delivered: []delivery.Sent{
					{RecordID: r.ID, UpdatedAt: r.UpdatedAt, Coalesced: r.CoalescedCount, SignalID: fmt.Sprint("s", i), Attempts: 1}}}
				if err := queue.CompleteThread(ctx, "", o); err != nil {
					b.Fatal(err)
				}
				return took
			}
			for range 1000 {
				pass()
			}
			var read time.Duration
			n := 0
			for b.Loop() {
				read += pass()
				n++
			}
			b.ReportMetric(float64(read.Microseconds())/float64(n), "read-cpu-µs/record")
		})
	}
}

// threadCPU is the CPU the calling OS thread has used (RUSAGE_THREAD).
func threadCPU(b *testing.B) time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
