package agentapi_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/signalgate/signalgate/deliverytest"
)

// BenchmarkStreamServing is the process's CPU per signal sent to a thread with several
// live subscribers, each receiving every frame.
func BenchmarkStreamServing(b *testing.B) {
	const subscribers, events = 8, 200
	for range b.N {
		b.StopTimer()
		e := deliverytest.New(b, deliverytest.Config{})
		k := coderThread
		subs := make([]*deliverytest.Stream, subscribers)
		for i := range subs {
			subs[i] = e.Subscribe(k, "", "")
		}
		t := &testing.T{}
		b.StartTimer()
		start := cpuTime()
		for i := range events {
			persist(t, e, k, fmt.Sprint("bench", i))
		}
		for _, s := range subs {
			s.Take(events)
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/events, "cpu-us/event")
		b.StopTimer()
		for _, s := range subs {
			s.Close()
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
