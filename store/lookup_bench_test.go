package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkOwnReply measures the lookup every Slack message and GitHub comment makes
// (is it one of the gateway's own replies?) among 1,000 sent replies, half of them hits:
// a prepared statement, not SQL parsed again per event.
func BenchmarkOwnReply(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := storetest.Open(b, be)
			replies := store.NewReplies(s)
			ctx := context.Background()
			for i := range 1000 {
				id := fmt.Sprintf("r%d", i)
				if _, _, err := replies.CreateReply(ctx, newReply(id, t0)); err != nil {
					b.Fatal(err)
				}
				sent := reply.Outcome{Status: reply.StatusSent, Now: t0, Sent: reply.Sent{PlatformID: fmt.Sprintf("p%d", i)}}
				if err := replies.FinishReply(ctx, id, "", sent); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			loopCPU(b, func() error {
				_, err := replies.OwnReply(ctx, "slack", "acme", fmt.Sprintf("p%d", i%2000))
				i++
				return err
			})
		})
	}
}

// BenchmarkPassChecks measures the reads every dispatcher pass makes to find nothing to
// do (no snooze ended, no hold ended, no run lapsed), in a store holding 1,000 pending
// records and 100 snoozes that end later: at 50 events a second there is a pass per
// event, so these fixed reads are paid per event.
func BenchmarkPassChecks(b *testing.B) {
	redecide := func(r inbox.Record, _ inbox.Presence, _ time.Time) inbox.Decision {
		return inbox.Decision{Action: r.Action, Reason: r.Reason}
	}
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := storetest.Open(b, be)
			inboxStore := store.NewInbox(s)
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			if err != nil {
				b.Fatal(err)
			}
			svc := inbox.NewService(inboxStore, pol, inbox.WithClock(func() time.Time { return t0 }))
			ctx := context.Background()
			for i := range 1000 {
				n := comment("Jane commented", fmt.Sprintf("k%d", i), "")
				n.Thread.Thread = fmt.Sprintf("acme/api#%d", i%100)
				res := ingest(b, svc, fmt.Sprintf("d%d", i), n)
				if i%10 == 0 {
					if _, err := store.NewRecords(s).SnoozeRecord(ctx, n.Thread, res.Records[0].RecordID, t0.Add(time.Hour), t0); err != nil {
						b.Fatal(err)
					}
				}
			}
			now := t0.Add(time.Minute)
			for _, c := range []struct {
				name string
				run  func() error
			}{
				{"ReleaseSnoozed", func() error { _, err := inboxStore.ReleaseSnoozed(ctx, now, redecide, 100); return err }},
				{"ReleaseHeld", func() error { _, err := inboxStore.ReleaseHeld(ctx, now, redecide, 100); return err }},
				{"ExpireRuns", func() error { _, _, err := store.NewRuns(s).ExpireRuns(ctx, now); return err }},
				{"TargetStates", func() error { _, err := store.NewTargets(s).TargetStates(ctx); return err }},
				{"NextDue", func() error { _, err := store.NewQueue(s).NextDue(ctx, now); return err }},
			} {
				b.Run(c.name, func(b *testing.B) { loopCPU(b, c.run) })
			}
		})
	}
}

// loopCPU runs fn as the benchmark's loop and reports the process's CPU per call too (on
// PostgreSQL the server's is not in it), the figure the machine's other load disturbs least.
func loopCPU(b *testing.B, fn func() error) {
	b.ReportAllocs()
	cpu0, n := cpuTime(b), 0
	for b.Loop() {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1e3/float64(n), "cpu-µs/op")
}
