package delivery_test

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
)

// BenchmarkIdleSubscriberMemory reports what one idle stream subscriber costs the
// gateway: heap and goroutine stack per open GET …/stream, waiting after it replayed
// the thread's one frame. The clients are bare connections that read up to that frame,
// so the figure is the server's side (plus a connection's few hundred bytes). They
// follow 100 threads, 5 each: within agents[].max_streams_per_thread.
func BenchmarkIdleSubscriberMemory(b *testing.B) {
	const threads, perThread = 100, 5
	const subscribers = threads * perThread
	for b.Loop() {
		e := deliverytest.New(b, deliverytest.Config{RealClock: true})
		u, err := url.Parse(e.Server.URL)
		require.NoError(b, err)
		keys := make([]inbox.ThreadKey, threads)
		for i := range keys {
			keys[i] = inbox.ThreadKey{Agent: "coder", Resource: "mem", Thread: fmt.Sprintf("idle%d", i)}
			e.Ingest(inbox.Notification{Thread: keys[i], Source: "github", Kind: "ci", Summary: "CI failed", Priority: inbox.PriorityUrgent})
		}
		e.Pass()
		before := inUse()
		conns := make([]net.Conn, 0, subscribers)
		for i := range subscribers {
			k := keys[i%threads]
			c, err := net.Dial("tcp", u.Host)
			require.NoError(b, err)
			conns = append(conns, c)
			path := strings.TrimPrefix(e.ThreadURL(k, "/stream"), e.Server.URL)
			_, err = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
				path, u.Host, deliverytest.CoderToken)
			require.NoError(b, err)
			// Up to the frame: the handler has read the log and goes on to wait.
			r := bufio.NewReaderSize(c, 64)
			status, err := r.ReadString('\n')
			require.NoError(b, err)
			require.Contains(b, status, " 200 ")
			for {
				line, err := r.ReadString('\n')
				require.NoError(b, err)
				if strings.HasPrefix(line, "data: ") {
					break
				}
			}
		}
		after := inUse()
		// Apart as well: stacks are most of it (two goroutines per connection, the
		// server's), and the collector's heap goal counts them too.
		b.ReportMetric(float64(after.total()-before.total())/subscribers, "B/subscriber")
		b.ReportMetric(float64(after.stack-before.stack)/subscribers, "stack-B/subscriber")
		for _, c := range conns {
			c.Close()
		}
	}
}

// BenchmarkIdleThreadMemory reports what a thread costs the dispatcher once its records
// are delivered and it goes quiet: heap and stacks per idle thread, after passes over
// many threads. Idle threads live in the database only, so this stays near zero. A
// first pass over a few threads warms what every pass reuses (connections, prepared
// statements), so the figure counts only what grows with the threads.
func BenchmarkIdleThreadMemory(b *testing.B) {
	const threads = 3000
	for b.Loop() {
		e := deliverytest.New(b, deliverytest.Config{})
		for i := range 300 {
			k := inbox.ThreadKey{Agent: "coder", Resource: "warm", Thread: fmt.Sprintf("w%d", i)}
			e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "CI failed", Priority: inbox.PriorityUrgent})
		}
		e.Pass()
		before := inUse()
		for i := range threads {
			k := inbox.ThreadKey{Agent: "coder", Resource: "mem", Thread: fmt.Sprintf("t%d", i)}
			e.Ingest(inbox.Notification{Thread: k, Source: "github", Kind: "ci", Summary: "CI failed", Priority: inbox.PriorityUrgent})
		}
		e.Pass()
		after := inUse()
		b.ReportMetric(float64(after.total()-before.total())/threads, "B/idle-thread")
	}
}

// memory is the live heap and the goroutine stacks.
type memory struct{ heap, stack int64 }

func (m memory) total() int64 { return m.heap + m.stack }

// inUse measures memory after collections: two, so sync.Pool's victim caches are empty in
// every measure.
func inUse() memory {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memory{heap: int64(m.HeapAlloc), stack: int64(m.StackInuse)}
}
