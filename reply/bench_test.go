package reply_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// Figures of the reply outbox: the real Service on SQLite, sending through the real
// Slack replier to the in-process Slack Web API fake (slacktest). Run with
//
//	go test ./reply -run '^$' -bench . -benchtime 1x
//
// BenchmarkRepliesSent reports replies/s (queue b.N replies, wait until all are sent);
// BenchmarkReplyLatencyAt50PerSecond reports the p50 and p99 from Queue's return (the
// API's 202) to chat.postMessage's answer at 50 replies/s.

const benchThreads = 50

// answered wraps the Slack replier and hears when the platform answered each reply.
type answered struct {
	reply.Sender
	mu   sync.Mutex
	at   map[string]time.Time
	want int
	done chan struct{}
}

func (a *answered) Send(ctx context.Context, r reply.Reply) (reply.Sent, bool, error) {
	s, retry, err := a.Sender.Send(ctx, r)
	if err == nil {
		a.mu.Lock()
		if _, seen := a.at[r.ID]; !seen {
			a.at[r.ID] = time.Now()
			if len(a.at) == a.want {
				close(a.done)
			}
		}
		a.mu.Unlock()
	}
	return s, retry, err
}

type benchRig struct {
	svc     *reply.Service
	sender  *answered
	threads []inbox.ThreadKey
}

// newBenchRig starts the service on a fresh SQLite store whose 50 threads each have a
// Slack notification to answer; the rig expects want replies.
func newBenchRig(b *testing.B, want int) benchRig {
	b.Helper()
	ctx := context.Background()
	st := storetest.OpenSQLite(b)
	api := webapitest.New(b)
	cfg := slack.Config{Name: "acme", SigningSecret: "bench-signing-secret-0123456789abcdef", BotUserID: "UBOT",
		BotToken: "xoxb-bench-token", APIURL: api.APIURL()}
	slk, err := slack.NewReplier([]slack.Config{cfg}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	if err != nil {
		b.Fatal(err)
	}
	in := inbox.NewService(store.NewInbox(st), pol)
	rig := benchRig{sender: &answered{Sender: slk, at: map[string]time.Time{}, want: want, done: make(chan struct{})}}
	for i := range benchThreads {
		k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: fmt.Sprintf("C%04d", i)}
		to := reply.NewTo("slack", "acme", slack.Place{Team: "T1", Channel: k.Thread, ThreadTS: "1699999999.000100"})
		n := inbox.Notification{Thread: k, Source: "slack", Kind: "message", Summary: "hi",
			Metadata: verified(to)}
		if _, err := in.Ingest(ctx, &inbox.Event{Source: "slack", Connector: "acme", DeliveryID: k.Thread,
			Type: "message", Body: []byte(`{}`)}, []inbox.Notification{n}); err != nil {
			b.Fatal(err)
		}
		rig.threads = append(rig.threads, k)
	}
	rig.svc = reply.New(store.NewReplies(st), map[string]reply.Sender{"slack": rig.sender}, service.Base{}, reply.WithProvenance(trust), reply.WithPlaces(kindstest.Places()))
	if err := rig.svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rig.svc.Stop(context.Background()) })
	return rig
}

func (rig benchRig) queue(b *testing.B, i int) time.Time {
	k := rig.threads[i%benchThreads]
	if _, err := rig.svc.Queue(context.Background(), k, reply.Request{ID: fmt.Sprintf("r-%d", i), Text: "On it: **fixed** in #8"}); err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	rig.svc.Notify()
	return at
}

func BenchmarkRepliesSent(b *testing.B) {
	rig := newBenchRig(b, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		rig.queue(b, i)
	}
	<-rig.sender.done
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "replies/s")
}

func BenchmarkReplyLatencyAt50PerSecond(b *testing.B) {
	const rate, count = 50, 1000 // 20 s at 50/s
	for b.Loop() {
		rig := newBenchRig(b, count)
		queued := make([]time.Time, count)
		tick := time.NewTicker(time.Second / rate)
		for i := range count {
			<-tick.C
			queued[i] = rig.queue(b, i)
		}
		tick.Stop()
		<-rig.sender.done
		lat := make([]time.Duration, count)
		rig.sender.mu.Lock()
		for i := range count {
			lat[i] = rig.sender.at[fmt.Sprintf("r-%d", i)].Sub(queued[i])
		}
		rig.sender.mu.Unlock()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[count/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[count*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[count-1].Microseconds())/1000, "max-ms")
	}
}
