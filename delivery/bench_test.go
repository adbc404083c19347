package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// BenchmarkDispatch measures dispatcher throughput: 10,000 due records over 100 idle
// threads, and 20,000 over 10,000 threads (each thread's first record wakes it, the rest
// go into that run), delivered to the stream target. Run with -benchtime 1x; records/s is
// the figure, and the process's CPU per record (dispatcher and store together).
func BenchmarkDispatch(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		for _, size := range []struct{ records, threads int }{{10000, 100}, {20000, 10000}} {
			benchDispatch(b, backend, size.records, size.threads)
		}
	}
}

func benchDispatch(b *testing.B, backend storetest.Backend, records, threads int) {
	name := backend.Name
	if threads != 100 {
		name += fmt.Sprintf("/threads=%d", threads)
	}
	b.Run(name, func(b *testing.B) {
		var total, cpu time.Duration
		for range b.N {
			b.StopTimer()
			bk := backend
			if bk.Name == "sqlite" {
				bk.Config = storetest.SQLiteConfig(b)
			} else {
				bk.Config = storetest.PostgresConfig(b, storetestDSN())
			}
			e := deliverytest.New(b, deliverytest.Config{Backend: &bk})
			ns := make([]inbox.Notification, 0, 100)
			for i := range records {
				ns = append(ns, inbox.Notification{Thread: key(fmt.Sprint("t", i%threads)), Source: "github", Kind: "ci",
					Summary: fmt.Sprint("record ", i), Priority: inbox.PriorityUrgent})
				if len(ns) == cap(ns) {
					_, err := e.Inbox.Ingest(context.Background(), &inbox.Event{Source: "github", Connector: "bench"}, ns)
					if err != nil {
						b.Fatal(err)
					}
					ns = ns[:0]
				}
			}
			start, cpu0 := time.Now(), processCPU(b)
			b.StartTimer()
			// Pass bounds its passes for tests; many threads take many passes.
			for {
				n, err := e.Dispatcher.RunOnce(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			b.StopTimer()
			total += time.Since(start)
			cpu += processCPU(b) - cpu0
			if n, err := store.NewQueue(e.Store).NextDue(context.Background(), e.Clock.Now()); err != nil || (n != nil && !n.After(e.Clock.Now())) {
				b.Fatalf("not drained: %v %v", n, err)
			}
		}
		b.ReportMetric(float64(records*b.N)/total.Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(records*b.N), "cpu-µs/record")
	})
}

// processCPU is the CPU this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func storetestDSN() string { return os.Getenv(storetest.PostgresEnv) }

// BenchmarkStreamLatency measures end to end latency over loopback: a notification
// created through the agent API → the frame read by a stream subscriber, at a fixed rate
// spread over 100 threads each with its own subscriber (urgent, so nothing is paced). The
// load is bounded (a few seconds per rate); run with -benchtime 1x.
func BenchmarkStreamLatency(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		for _, tc := range []struct {
			rate int
			dur  time.Duration
		}{{200, 5 * time.Second}, {2000, 3 * time.Second}} {
			b.Run(fmt.Sprintf("%s/rate=%d", backend.Name, tc.rate), func(b *testing.B) {
				for range b.N {
					bk := backend
					if bk.Name == "sqlite" {
						bk.Config = storetest.SQLiteConfig(b)
					} else {
						bk.Config = storetest.PostgresConfig(b, storetestDSN())
					}
					p50, p99, achieved := streamLatency(b, &bk, tc.rate, tc.dur)
					b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
					b.ReportMetric(achieved, "sent/s")
				}
			})
		}
	}
}

func streamLatency(b *testing.B, backend *storetest.Backend, rate int, dur time.Duration) (p50, p99 time.Duration, achieved float64) {
	b.StopTimer()
	const threads, clients = 100, 32
	e := deliverytest.New(b, deliverytest.Config{Backend: backend, RealClock: true, Dispatch: []delivery.Option{delivery.WithBatch(64, 8)}})
	if err := e.Dispatcher.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	total := int(float64(rate) * dur.Seconds())
	sent := make([]time.Time, total)
	recv := make([]time.Time, total)
	var mu sync.Mutex
	var got sync.WaitGroup
	got.Add(total)
	for th := range threads {
		sub := e.Subscribe(key(fmt.Sprint("t", th)), "", "after=latest")
		go func() {
			for {
				ev, ok := sub.NextAny(time.Minute)
				if !ok {
					return
				}
				if ev.Event != "signal" {
					continue
				}
				n, err := strconv.Atoi(strings.TrimPrefix(ev.Str("contents"), "n-"))
				if err != nil {
					continue
				}
				mu.Lock()
				if recv[n].IsZero() {
					recv[n] = time.Now()
					got.Done()
				}
				mu.Unlock()
			}
		}()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	jobs := make(chan int, total)
	var senders sync.WaitGroup
	for range clients {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for i := range jobs {
				k := key(fmt.Sprint("t", i%threads))
				body, _ := json.Marshal(map[string]any{"source": "github", "kind": "ci", "summary": fmt.Sprint("n-", i), "priority": "urgent"})
				req, _ := http.NewRequest(http.MethodPost, e.ThreadURL(k, "/notifications"), bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+deliverytest.CoderToken)
				mu.Lock()
				sent[i] = time.Now()
				mu.Unlock()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("create: %d", resp.StatusCode)
				}
			}
		}()
	}
	b.StartTimer()
	start := time.Now()
	for i := range total {
		if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
			time.Sleep(d)
		}
		jobs <- i
	}
	close(jobs)
	senders.Wait()
	achieved = float64(total) / time.Since(start).Seconds()
	done := make(chan struct{})
	go func() { got.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatal("frames missing after a minute")
	}
	b.StopTimer()
	lat := make([]time.Duration, total)
	mu.Lock()
	for i := range total {
		lat[i] = recv[i].Sub(sent[i])
	}
	mu.Unlock()
	slices.Sort(lat)
	return lat[total/2], lat[total*99/100], achieved
}
