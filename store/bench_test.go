package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkInboxInsert measures a new event plus a new record (no dedupe hit).
func BenchmarkInboxInsert(b *testing.B) { benchIngest(b, false) }

// BenchmarkInboxMerge measures a new event merging into one pending record.
func BenchmarkInboxMerge(b *testing.B) { benchIngest(b, true) }

func benchIngest(b *testing.B, merge bool) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := storetest.Open(b, be)
			pol, _ := inbox.NewPolicy(inbox.PolicyConfig{})
			svc := inbox.NewService(s, pol)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			start := time.Now()
			for b.Loop() {
				key := fmt.Sprintf("k%d", i)
				if merge {
					key = "same"
				}
				n := comment("Jane commented on acme/api#7: looks good", key, "")
				ev := &inbox.Event{Source: "github", Connector: "acme", DeliveryID: fmt.Sprintf("d%d", i), Type: "issue_comment", Body: []byte(`{"action":"created"}`)}
				if _, err := svc.Ingest(ctx, ev, []inbox.Notification{n}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/time.Since(start).Seconds(), "records/s")
		})
	}
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
				if _, err := s.FramesAfter(ctx, thread, seq%100, 100); err != nil {
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
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s := storetest.Open(b, be)
			pol, _ := inbox.NewPolicy(inbox.PolicyConfig{})
			svc := inbox.NewService(s, pol)
			ctx := context.Background()
			i := 0
			ingest := func() {
				n := comment("Jane commented on acme/api#7: looks good", fmt.Sprintf("k%d", i), fmt.Sprintf("c%d", i))
				n.Priority = inbox.PriorityLow
				ev := &inbox.Event{Source: "github", Connector: "acme", DeliveryID: fmt.Sprintf("d%d", i), Type: "issue_comment", Body: []byte(`{"action":"created"}`)}
				if _, err := svc.Ingest(ctx, ev, []inbox.Notification{n}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			for range 2000 {
				ingest()
			}
			b.ReportAllocs()
			for b.Loop() {
				ingest()
			}
		})
	}
}
