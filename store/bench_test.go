package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkInboxInsert measures a new event plus a new record (no dedupe hit).
func BenchmarkInboxInsert(b *testing.B) { benchIngest(b, false) }

// BenchmarkInboxMerge measures a new event merging into one pending record.
func BenchmarkInboxMerge(b *testing.B) { benchIngest(b, true) }

// benchInbox runs fn against every configured backend with an inbox on the real clock.
func benchInbox(b *testing.B, fn func(b *testing.B, svc *inbox.Service)) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
			if err != nil {
				b.Fatal(err)
			}
			fn(b, inbox.NewService(store.NewInbox(storetest.Open(b, be)), pol))
		})
	}
}

func benchIngest(b *testing.B, merge bool) {
	benchInbox(b, func(b *testing.B, svc *inbox.Service) {
		b.ReportAllocs()
		i := 0
		start := time.Now()
		for b.Loop() {
			key := fmt.Sprintf("k%d", i)
			if merge {
				key = "same"
			}
			ingest(b, svc, fmt.Sprintf("d%d", i), comment("Jane commented on acme/api#7: looks good", key, ""))
			i++
		}
		b.ReportMetric(float64(i)/time.Since(start).Seconds(), "records/s")
	})
}

// BenchmarkFramesAfter measures a stream subscriber's read of the frames after its last
// seq (each woken subscriber makes one): a prepared statement that must stay prepared.
func BenchmarkFramesAfter(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := storetest.Open(b, be)
			ctx := context.Background()
			b.ReportAllocs()
			var seq int64
			for b.Loop() {
				if _, err := store.NewFrames(s).FramesAfter(ctx, thread, seq%100, 100); err != nil {
					b.Fatal(err)
				}
				seq++
			}
		})
	}
}

// BenchmarkInboxMergeLookup measures a new event in a thread already holding 2,000
// pending records of its source and kind (none of them its merge target): the merge
// lookup must go by key, not read the family.
func BenchmarkInboxMergeLookup(b *testing.B) {
	benchInbox(b, func(b *testing.B, svc *inbox.Service) {
		i := 0
		next := func() {
			n := comment("Jane commented on acme/api#7: looks good", fmt.Sprintf("k%d", i), fmt.Sprintf("c%d", i))
			n.Priority = inbox.PriorityLow
			ingest(b, svc, fmt.Sprintf("d%d", i), n)
			i++
		}
		for range 2000 {
			next()
		}
		b.ReportAllocs()
		for b.Loop() {
			next()
		}
	})
}
