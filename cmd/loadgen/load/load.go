// Package load generates signed webhook traffic against signalgate, follows every
// thread's stream and checks that each acknowledged event reaches its thread exactly
// once. cmd/loadgen is its command line; the gateway's crash and scale tests drive it
// directly.
package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// Limits keep a run bounded whatever the flags say.
const (
	MaxEvents   = 2_000_000
	MaxThreads  = 100_000
	MaxDuration = 10 * time.Minute
	MaxClients  = 1024
)

// Config is one load run.
type Config struct {
	Scenario
	URLs        []string // gateway base URLs; events and streams go round-robin
	Sources     []string // github, slack, generic
	Threads     int
	Subscribers int // threads followed over SSE (the first ones); 0 means every thread; -1 none
	Events      int
	Duration    time.Duration // sending stops after this even if Events were not all sent
	Rate        float64       // events/s; 0 sends as fast as the clients can
	Clients     int
	Drain       time.Duration // how long to wait for the last frames after sending
	Busy        float64       // fraction of followed threads whose agent opens and finishes runs
	BusyHold    time.Duration
	Retries     int // a failed delivery is sent again (same delivery id) on the next URL
	RunID       string
	// PIDs are the gateways' pids (every replica): CPU per event sums them, RSS is the
	// first's. None: RSS from the metrics endpoint and no CPU figures.
	PIDs []int
	// DBPID is the database server's (PostgreSQL postmaster's) pid: its CPU and its
	// children's is reported too. ClockTicks is /proc's tick rate (DefaultClockTicks).
	DBPID      int
	ClockTicks int
	// Watches are created before sending, none matching the run's events;
	// WatchThreads adds one per Slack thread that its events match (watches.go).
	Watches      int
	WatchThreads bool
	// KeepSeen records every signal id each subscriber received (tests).
	KeepSeen bool
	// OnAck is called after each acknowledged event with the count so far (tests kill
	// the gateway at chosen moments from it).
	OnAck func(acked int)
	// RuntimeUpstream is the runtime behind Scenario.Runtime's proxy: Run serves the
	// proxy, counting the gateway's requests, and reads when the runtime began each event.
	RuntimeUpstream string
}

// Latency percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Result is what a run measured.
type Result struct {
	Target       string         `json:"target"`
	Sent         int            `json:"sent"`
	Acked        int            `json:"acked"`
	Failed       int            `json:"failed"`
	Retried      int            `json:"retried"`
	Status       map[string]int `json:"status"`
	Seconds      float64        `json:"seconds"`
	ReqPerSec    float64        `json:"req_per_s"`
	Ingest       Latency        `json:"ingest"`
	EndToEnd     Latency        `json:"end_to_end"`
	Threads      int            `json:"threads"`
	Subscribed   int            `json:"subscribed"`
	Frames       int            `json:"signal_frames"`
	FramesMin    int            `json:"frames_per_thread_min"`
	FramesMax    int            `json:"frames_per_thread_max"`
	FramesAvg    float64        `json:"frames_per_thread_avg"`
	Tracked      int            `json:"tracked_acked"`
	Lost         int            `json:"lost"`
	LostExamples []string       `json:"lost_examples,omitempty"`
	Duplicated   int            `json:"duplicated"`
	DupFrames    int            `json:"duplicate_frames"`
	Conflicting  int            `json:"conflicting_contents"`
	Reconnects   int64          `json:"stream_reconnects"`
	RSSBytes     int64          `json:"rss_bytes,omitempty"`
	RSSPeakBytes int64          `json:"rss_peak_bytes,omitempty"`
	// CPU per acked event in microseconds, from just before the traffic until every
	// tracked frame arrived (or the drain gave up): the gateways' (summed), the
	// database server's; GatewayCPUAcked stops at the last ack.
	GatewayCPU      float64 `json:"gateway_cpu_us_per_event,omitempty"`
	GatewayCPUAcked float64 `json:"gateway_cpu_us_per_event_to_last_ack,omitempty"`
	DBCPU           float64 `json:"db_cpu_us_per_event,omitempty"`
	// Watches is how many watches were created before sending, in WatchSetup seconds.
	Watches    int     `json:"watches,omitempty"`
	WatchSetup float64 `json:"watch_setup_s,omitempty"`
	// Seen is, per thread, the signal ids its subscriber received (Config.KeepSeen).
	Seen map[inbox.ThreadKey]map[string]bool `json:"-"`
	// AckedDeliveries are the provider delivery ids answered 2xx.
	AckedDeliveries []string `json:"-"`
	// AckedMarkers are the markers of the events answered 2xx.
	AckedMarkers map[string]bool `json:"-"`
	// Runtime is what a runtime target's run measured (Scenario.Runtime).
	Runtime *RuntimeRun `json:"runtime,omitempty"`
}

func (c *Config) defaults() error {
	if len(c.URLs) == 0 {
		return errors.New("no gateway URL")
	}
	for _, u := range c.URLs {
		if err := loopbackOnly(u); err != nil {
			return err
		}
	}
	if c.Scenario.Runtime != nil {
		for _, u := range []string{c.Scenario.Runtime.URL, c.RuntimeUpstream} {
			if err := loopbackOnly(u); err != nil {
				return fmt.Errorf("%s: %w", c.Scenario.Runtime.Kind, err)
			}
		}
	}
	if len(c.Sources) == 0 {
		c.Sources = []string{SourceGitHub, SourceSlack, SourceGeneric}
	}
	for _, s := range c.Sources {
		if s != SourceGitHub && s != SourceSlack && s != SourceGeneric {
			return fmt.Errorf("unknown source %q", s)
		}
	}
	if c.Scenario.Agent == "" {
		c.Scenario = DefaultScenario()
	}
	c.Threads = clamp(c.Threads, 1, MaxThreads, 100)
	c.Events = clamp(c.Events, 1, MaxEvents, 10_000)
	c.Clients = clamp(c.Clients, 1, MaxClients, 16)
	c.Watches = max(0, min(c.Watches, MaxWatches))
	if c.Duration <= 0 || c.Duration > MaxDuration {
		c.Duration = MaxDuration
	}
	if c.Drain <= 0 {
		c.Drain = 30 * time.Second
	}
	c.Drain = min(c.Drain, MaxDuration)
	if c.BusyHold <= 0 {
		c.BusyHold = 500 * time.Millisecond
	}
	switch {
	case c.Subscribers == 0 || c.Subscribers > c.Threads:
		c.Subscribers = c.Threads
	case c.Subscribers < 0:
		c.Subscribers = 0
	}
	if c.RunID == "" {
		c.RunID = strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	}
	return nil
}

func clamp(v, lo, hi, def int) int {
	if v == 0 {
		return def
	}
	return max(lo, min(v, hi))
}

// loopbackOnly keeps generated traffic on this machine.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("url %q: want http://127.0.0.1:port", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("url %q: only loopback targets are allowed", raw)
}

// Run sends the load, follows the streams, drains and reports. It returns when the
// events are sent and drained, the duration is up, or ctx ends.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	b, err := newBuilder(cfg.Scenario, cfg.Sources, cfg.RunID)
	if err != nil {
		return nil, err
	}
	tr := newTracker(cfg.RunID, cfg.Threads, cfg.KeepSeen)
	ingest := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: cfg.Clients * 2, MaxIdleConnsPerHost: cfg.Clients * 2, IdleConnTimeout: 30 * time.Second,
	}}
	streams := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, ResponseHeaderTimeout: 10 * time.Second}}
	defer ingest.CloseIdleConnections()
	defer streams.CloseIdleConnections()

	watches, watchSetup, err := setUpWatches(ctx, cfg, ingest)
	if err != nil {
		return nil, fmt.Errorf("set up %d watches (%d created): %w", cfg.Watches, watches, err)
	}

	var lg *counter
	if cfg.Runtime != nil {
		u, _ := url.Parse(cfg.Runtime.URL)
		if lg, err = startCounter(u.Host, cfg.RuntimeUpstream); err != nil {
			return nil, err
		}
		defer lg.srv.Close()
	}

	rssPID := 0
	if len(cfg.PIDs) > 0 {
		rssPID = cfg.PIDs[0]
	}
	rss := newRSSSampler(rssPID, cfg.URLs[0])
	cpu := newCPUMeter(cfg.PIDs, cfg.DBPID, cfg.ClockTicks)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go rss.run(sampleCtx)
	defer stopSampling()

	// Streams first, so every frame of the run is seen.
	streamCtx, stopStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStreams()
	subs := make([]*subscriber, cfg.Subscribers)
	var streamWG sync.WaitGroup
	readyAll := make(chan struct{})
	var readyWG sync.WaitGroup
	for i := range subs {
		_, k := cfg.ThreadFor(i, cfg.Sources)
		subs[i] = &subscriber{ti: i, key: k, urls: cfg.URLs, token: cfg.AgentToken, client: streams, tr: tr, seen: map[string]bool{}}
		ready := make(chan struct{})
		readyWG.Add(1)
		streamWG.Add(1)
		go func() { defer streamWG.Done(); subs[i].run(streamCtx, ready) }()
		go func() { defer readyWG.Done(); <-ready }()
	}
	go func() { readyWG.Wait(); close(readyAll) }()
	select {
	case <-readyAll:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		return nil, errors.New("streams did not connect within 60s")
	}
	busy := int(cfg.Busy * float64(cfg.Subscribers))
	for i := 0; i < busy; i++ {
		streamWG.Add(1)
		go func() {
			defer streamWG.Done()
			busyAgent(streamCtx, ingest, cfg.URLs[i%len(cfg.URLs)], cfg.AgentToken, subs[i].key, cfg.BusyHold)
		}()
	}

	res := &Result{Target: cfg.URLs[0], Status: map[string]int{}, Threads: cfg.Threads, Subscribed: cfg.Subscribers, AckedMarkers: map[string]bool{},
		Watches: watches, WatchSetup: watchSetup}
	sendCtx, stopSending := context.WithTimeout(ctx, cfg.Duration)
	defer stopSending()
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, cfg.Events)
		acked     atomic.Int64
		next      atomic.Int64
	)
	cpu0 := cpu.read()
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1) - 1)
				if n >= cfg.Events || sendCtx.Err() != nil {
					return
				}
				if cfg.Rate > 0 {
					due := start.Add(time.Duration(float64(n) / cfg.Rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						t := time.NewTimer(d)
						select {
						case <-sendCtx.Done():
							t.Stop()
							return
						case <-t.C:
						}
					}
				}
				ti := n % cfg.Threads
				req, err := b.build(n, ti, time.Now()) // b is only read
				if err != nil {
					mu.Lock()
					res.Status["build: "+err.Error()]++
					mu.Unlock()
					continue
				}
				tracked := ti < cfg.Subscribers
				if tracked {
					tr.sent(req.marker, time.Now())
				}
				status, lat, retried := send(sendCtx, ingest, cfg, n, req)
				mu.Lock()
				res.Sent++
				res.Retried += retried
				res.Status[status]++
				ok := status[0] == '2'
				if ok {
					res.Acked++
					latencies = append(latencies, lat)
					res.AckedDeliveries = append(res.AckedDeliveries, req.delivery)
					res.AckedMarkers[req.marker] = true
				} else {
					res.Failed++
				}
				mu.Unlock()
				if ok {
					if tracked {
						tr.ack(req.marker)
					}
					if cfg.OnAck != nil {
						cfg.OnAck(int(acked.Add(1)))
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuAcked := cpu.read()
	tr.doneSending()
	if cfg.Subscribers > 0 {
		t := time.NewTimer(cfg.Drain)
		select {
		case <-tr.drained:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	cpu1 := cpu.read()
	var lgRun *RuntimeRun
	if lg != nil {
		// The gateway reads each run's end after its frame: count until it is done.
		lg.quiet(ctx, 2*time.Second, time.Minute)
		lgRun = &RuntimeRun{Kind: cfg.Runtime.Kind}
		lgRun.Requests, lgRun.Total = lg.snapshot()
		var mErr error
		lgRun.RunStart, lgRun.Runs, mErr = measureRuntime(ctx, cfg, tr)
		if mErr != nil {
			return nil, fmt.Errorf("read the %s runtime's runs: %w", cfg.Runtime.Kind, mErr)
		}
	}
	stopStreams()
	streamWG.Wait()
	stopSampling()
	if cpu0.ok && cpuAcked.ok && cpu1.ok {
		res.GatewayCPU = perEvent(cpu0.gateway, cpu1.gateway, res.Acked)
		res.GatewayCPUAcked = perEvent(cpu0.gateway, cpuAcked.gateway, res.Acked)
		res.DBCPU = perEvent(cpu0.db, cpu1.db, res.Acked)
	}

	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.ReqPerSec = float64(res.Acked) / res.Seconds
	}
	res.Ingest = percentiles(latencies)
	tr.mu.Lock()
	res.EndToEnd = percentiles(tr.e2e)
	res.Tracked = len(tr.acked)
	res.Duplicated, res.DupFrames, res.Conflicting = tr.dupMarker, tr.dupFrame, tr.conflicts
	if cfg.Subscribers > 0 {
		fr := tr.frames[:cfg.Subscribers]
		res.FramesMin, res.FramesMax = slices.Min(fr), slices.Max(fr)
		for _, f := range fr {
			res.Frames += f
		}
		res.FramesAvg = float64(res.Frames) / float64(len(fr))
	}
	if cfg.KeepSeen {
		res.Seen = map[inbox.ThreadKey]map[string]bool{}
		for ti, ids := range tr.seen {
			_, k := cfg.ThreadFor(ti, cfg.Sources)
			res.Seen[k] = ids
		}
	}
	tr.mu.Unlock()
	res.Lost, res.LostExamples = tr.lost()
	for _, s := range subs {
		res.Reconnects += s.reconns.Load()
	}
	res.RSSBytes, res.RSSPeakBytes = rss.result()
	if lgRun != nil {
		if res.Frames > 0 {
			lgRun.PerSignal = float64(lgRun.Total) / float64(res.Frames)
		}
		res.Runtime = lgRun
	}
	return res, nil
}

// send posts req, retrying failures on the next URL; it returns the final status
// ("200", "401", "error"), the latency of the last attempt and the retries made.
func send(ctx context.Context, client *http.Client, cfg Config, n int, req *request) (string, time.Duration, int) {
	status, lat := "error", time.Duration(0)
	for attempt := 0; attempt <= cfg.Retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return status, lat, attempt - 1
			case <-t.C:
			}
		}
		base := cfg.URLs[(n+attempt)%len(cfg.URLs)]
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+req.path, bytes.NewReader(req.body))
		if err != nil {
			return "error", 0, attempt
		}
		hr.Header = req.header.Clone()
		t0 := time.Now()
		resp, err := client.Do(hr)
		lat = time.Since(t0)
		if err != nil {
			status = "error"
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = strconv.Itoa(resp.StatusCode)
		if resp.StatusCode < 500 {
			return status, lat, attempt
		}
	}
	return status, lat, cfg.Retries
}

func percentiles(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return Latency{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: float64(s[len(s)-1].Microseconds()) / 1000}
}
