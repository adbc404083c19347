package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkSilenceRelease measures the end of a silence holding 10,000 records, over 10
// threads and over one: the time from the early expire to the dispatcher settling (the
// release and the passes that send what it released), and the signals the threads got
// then (frames) and in all, once the summaries paced after them went too. Run with
// -benchtime 1x.
func BenchmarkSilenceRelease(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		for _, threads := range []int{10, 1} {
			b.Run(fmt.Sprintf("%s/threads=%d", backend.Name, threads), func(b *testing.B) {
				for range b.N {
					benchSilenceRelease(b, backend, 10000, threads)
				}
			})
		}
	}
}

func benchSilenceRelease(b *testing.B, backend storetest.Backend, records, threads int) {
	b.StopTimer()
	ctx := context.Background()
	bk := backend
	if bk.Name == "sqlite" {
		bk.Config = storetest.SQLiteConfig(b)
	} else {
		bk.Config = storetest.PostgresConfig(b, storetestDSN())
	}
	e := deliverytest.New(b, deliverytest.Config{Backend: &bk, Silences: true})
	sil, err := e.Silences.Create(ctx, silence.Input{Matchers: []silence.Matcher{{Name: "agent", Value: "coder"}},
		EndsAt: e.Clock.Now().Add(24 * time.Hour), CreatedBy: "bench", Comment: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ns := make([]inbox.Notification, 0, 100)
	for i := range records {
		ns = append(ns, inbox.Notification{Thread: key(fmt.Sprint("t", i%threads)), Source: "github", Kind: "ci",
			Summary: fmt.Sprint("record ", i), Priority: inbox.PriorityHigh})
		if len(ns) == cap(ns) {
			if _, err := e.Inbox.Ingest(ctx, &inbox.Event{Source: "github", Connector: "bench"}, ns); err != nil {
				b.Fatal(err)
			}
			ns = ns[:0]
		}
	}
	e.Clock.Advance(time.Minute)
	signals := func() int {
		n := 0
		for t := range threads {
			for _, f := range e.Log(key(fmt.Sprint("t", t))) {
				if _, again := f.Signal.Metadata["recoveredFrom"]; f.Event == agent.EventSignal && !again {
					n++ // a run's unfinished signals handed to the next run are not new ones
				}
			}
		}
		return n
	}
	if n := signals(); n != 0 {
		b.Fatalf("%d signals while silenced", n)
	}
	start := time.Now()
	b.StartTimer()
	if _, err := e.Silences.Expire(ctx, sil.ID, "bench"); err != nil {
		b.Fatal(err)
	}
	for {
		n, err := e.Dispatcher.RunOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	b.StopTimer()
	took := time.Since(start)
	first := signals()
	// What the first summaries could not carry (a pass reads a bounded number of a
	// thread's records) goes in the summaries paced after them.
	for range 1000 {
		next, err := store.NewQueue(e.Store).NextDue(ctx, e.Clock.Now())
		if err != nil {
			b.Fatal(err)
		}
		if next == nil {
			break
		}
		e.Clock.Advance(max(next.Sub(e.Clock.Now()), 0))
		if _, err := e.Dispatcher.RunOnce(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(took.Milliseconds()), "release-ms")
	b.ReportMetric(float64(first), "frames-at-release")
	b.ReportMetric(float64(signals()), "frames-total")
}
