package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// StormConfig is one run of the recorded storm against a gateway configured with
// StormScenario.GatewayConfig.
type StormConfig struct {
	Scenario   StormScenario
	URL        string
	OctokitDir string        // @octokit/webhooks-examples (make fixtures)
	Window     time.Duration // the storm's events are sent over this long (default 60s)
	Drain      time.Duration // then frames are counted this much longer (default 25s)
	// Busy is the fraction of the time each thread's agent works on its own (default
	// 0.3): it opens a run for Busy × BusyPeriod of every BusyPeriod (default 10s).
	Busy       float64
	BusyPeriod time.Duration
	// Handle is how long a woken agent takes before it finishes the run (default 2s).
	Handle time.Duration
	Seed   uint64
	Tuned  bool // the gateway runs the tuned config (reported only)
	// Shipped: the gateway runs the shipped config.yaml (storm-config --shipped) and
	// Scenario follows its agent (reported only).
	Shipped bool

	// Replies: each woken agent answers every wake with a reply to its notification's
	// replyTo, which the gateway posts to a fake Slack and GitHub listening on
	// PlatformAddr (the gateway runs GatewayConfig with Scenario.Platform at it); each
	// reply comes back as the platform's event for it after EchoDelay (default 500ms).
	Replies      bool
	PlatformAddr string
	EchoDelay    time.Duration
	// EchoAfterSent holds each event back until the gateway shows its reply sent, so it
	// is recognised by the platform id recorded, never by outrunning the recording.
	EchoAfterSent bool
	// Baseline is the model-visible frames per event of the same storm without replies,
	// when known: with replies they must not rise.
	Baseline *float64
}

// Storm targets (issue 16).
const (
	StormMaxFramesPerEvent = 0.10
	StormMaxUrgent         = time.Second
)

// StormResult is what the storm measured.
type StormResult struct {
	Config  string `json:"config"` // tuned, defaults or shipped
	Events  int    `json:"events"`
	Acked   int    `json:"acked"`
	Failed  int    `json:"failed"`
	Threads int    `json:"threads"`
	// Frames counts the signal frames the threads' streams carried, by action.
	Frames       map[string]int `json:"frames"`
	ModelVisible int            `json:"model_visible_frames"` // wake + deliver
	PerEvent     float64        `json:"model_visible_per_event"`
	Wakes        int            `json:"wakes"` // runs the gateway opened
	// UrgentMs is each urgent event's latency, from sending it to its frame on the stream.
	UrgentMs      []float64 `json:"urgent_latency_ms"`
	UrgentWorstMs float64   `json:"urgent_worst_ms"`
	// Unreachable counts events no record of the agent inbox API accounts for (each
	// event makes a record or merges into one: coalescedCount).
	Unreachable int `json:"unreachable"`
	// NoRecord counts the events the gateway acknowledged as making no record (its answer
	// says records: 0): a connector mapped them to nothing, so no inbox can show them.
	// They are part of Unreachable.
	NoRecord            int            `json:"no_record"`
	UnreachableByThread map[string]int `json:"unreachable_by_thread,omitempty"`
	Records             map[string]int `json:"records_by_status"`
	BusyMeasured        float64        `json:"agent_busy_fraction"`
	SendLagMaxMs        float64        `json:"send_lag_max_ms"` // how far sending fell behind the schedule
	Seconds             float64        `json:"seconds"`
	LoadAvg             [2]string      `json:"loadavg_1m_start_end"`
	Pass                bool           `json:"pass"`
	Misses              []string       `json:"misses,omitempty"`
	// Replies is what the replies mode measured (--replies).
	Replies *StormReplies `json:"replies,omitempty"`
}

func (c *StormConfig) defaults() error {
	if c.URL == "" {
		return errors.New("no gateway URL")
	}
	if err := loopbackOnly(c.URL); err != nil {
		return err
	}
	if c.Scenario.Agent == "" {
		c.Scenario = DefaultStormScenario()
	}
	if c.OctokitDir == "" {
		c.OctokitDir = "connectors/github/testdata/octokit"
	}
	if c.Window <= 0 {
		c.Window = time.Minute
	}
	if c.Drain <= 0 {
		c.Drain = 25 * time.Second
	}
	c.Window, c.Drain = min(c.Window, MaxDuration), min(c.Drain, MaxDuration)
	if c.Busy == 0 {
		c.Busy = 0.3
	}
	c.Busy = max(0, min(c.Busy, 0.9))
	if c.BusyPeriod <= 0 {
		c.BusyPeriod = 10 * time.Second
	}
	if c.Handle <= 0 {
		c.Handle = 2 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 16
	}
	if c.Replies && c.PlatformAddr == "" {
		return errors.New("replies: no platform address (the gateway's connectors reply to it)")
	}
	if c.EchoDelay <= 0 {
		c.EchoDelay = 500 * time.Millisecond
	}
	return nil
}

// RunStorm follows every storm thread, runs its agents (woken runs handled for Handle,
// plus their own work Busy of the time), sends the storm on schedule, drains, and
// checks every event against the agent inbox API.
func RunStorm(ctx context.Context, cfg StormConfig) (*StormResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	runID := fmt.Sprintf("%x", time.Now().UnixNano()%1e10)
	plan, err := cfg.Scenario.schedule(cfg.OctokitDir, runID, cfg.Window, cfg.Seed)
	if err != nil {
		return nil, err
	}
	threads := cfg.Scenario.stormThreads()
	res := &StormResult{Config: "defaults", Events: len(plan), Threads: len(threads), Frames: map[string]int{},
		Records: map[string]int{}, LoadAvg: [2]string{loadAvg(), ""}}
	switch {
	case cfg.Shipped:
		res.Config = "shipped"
	case cfg.Tuned:
		res.Config = "tuned"
	}
	client := &http.Client{Timeout: 30 * time.Second}
	streams := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, ResponseHeaderTimeout: 10 * time.Second}}
	defer client.CloseIdleConnections()
	defer streams.CloseIdleConnections()

	m := &stormMeter{frames: res.Frames, sent: map[string]time.Time{}, got: map[string]time.Duration{}}
	var platform *stormPlatform
	if cfg.Replies {
		res.Replies = &StormReplies{BaselinePerEvent: cfg.Baseline}
		m.replies = res.Replies
		if platform, err = startStormPlatform(&cfg, runID, client, res.Replies); err != nil {
			return nil, err
		}
		defer platform.close(context.Background())
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var wg sync.WaitGroup
	agents := make([]*stormAgent, len(threads))
	ready := make(chan struct{}, len(threads))
	for i, th := range threads {
		a := &stormAgent{cfg: &cfg, k: th.key, client: client, streams: streams, m: m, urgentLabels: urgentLabels(plan)}
		agents[i] = a
		wg.Add(2)
		go func() { defer wg.Done(); a.follow(runCtx, ready) }()
		go func() { defer wg.Done(); a.work(runCtx, time.Duration(i)*cfg.BusyPeriod/time.Duration(len(threads))) }()
	}
	for range threads {
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return nil, errors.New("storm streams did not connect within 30s")
		}
	}

	start := time.Now()
	ackedBy := make([]int, len(threads))
	for _, ev := range plan {
		if d := time.Until(start.Add(ev.at)); d > 0 && !service.Sleep(ctx, d) {
			return nil, ctx.Err()
		}
		lag := time.Since(start.Add(ev.at))
		res.SendLagMaxMs = max(res.SendLagMaxMs, float64(lag.Microseconds())/1000)
		if ev.urgent {
			m.sentAt(ev.label, time.Now())
		}
		if strings.HasPrefix(ev.req.path, "/webhooks/slack/") {
			// Signed as sent: a window longer than Slack's 5 minutes of allowed skew would
			// otherwise make its last DMs stale.
			signSlack(ev.req.header, cfg.Scenario.SlackSecret, time.Now(), ev.req.body)
		}
		records, err := ingest(ctx, client, cfg.URL, ev.req)
		switch {
		case err != nil:
			res.Failed++
		case records == 0:
			res.Acked++
			res.NoRecord++
		default:
			res.Acked++
			ackedBy[ev.thread]++
		}
	}
	service.Sleep(ctx, cfg.Drain)
	stop()
	wg.Wait()
	if platform != nil {
		platform.settle(ctx, func() int {
			m.mu.Lock()
			defer m.mu.Unlock()
			return res.Replies.Queued
		})
		platform.close(ctx) // the echoes under way are counted
	}
	res.Seconds = time.Since(start).Seconds()

	m.mu.Lock()
	res.ModelVisible = res.Frames["wake"] + res.Frames["deliver"]
	res.Wakes = m.wakes
	for _, ev := range plan {
		if !ev.urgent {
			continue
		}
		if d, ok := m.got[ev.label]; ok {
			ms := float64(d.Microseconds()) / 1000
			res.UrgentMs = append(res.UrgentMs, ms)
			res.UrgentWorstMs = max(res.UrgentWorstMs, ms)
		} else {
			res.UrgentMs = append(res.UrgentMs, -1)
			res.Misses = append(res.Misses, ev.label+" never reached its thread's stream")
		}
	}
	m.mu.Unlock()
	if res.Events > 0 {
		res.PerEvent = float64(res.ModelVisible) / float64(res.Events)
	}
	var busy time.Duration
	for _, a := range agents {
		busy += a.busyTotal(time.Now())
	}
	res.BusyMeasured = busy.Seconds() / (float64(len(agents)) * res.Seconds)

	for i, th := range threads {
		counted, err := inboxCount(ctx, client, cfg.URL, cfg.Scenario.AgentToken, th.key, res.Records)
		if err != nil {
			return nil, err
		}
		if miss := ackedBy[i] - counted; miss > 0 { // events that made records, not all accounted for
			if res.UnreachableByThread == nil {
				res.UnreachableByThread = map[string]int{}
			}
			res.UnreachableByThread[th.key.Thread] = miss
			res.Unreachable += miss
		}
	}
	res.Unreachable += res.NoRecord
	res.LoadAvg[1] = loadAvg()
	if res.PerEvent > StormMaxFramesPerEvent {
		res.Misses = append(res.Misses, fmt.Sprintf("model-visible frames per event %.3f > %.2f", res.PerEvent, StormMaxFramesPerEvent))
	}
	if res.UrgentWorstMs > float64(StormMaxUrgent.Milliseconds()) {
		res.Misses = append(res.Misses, fmt.Sprintf("worst urgent latency %.0f ms > %s", res.UrgentWorstMs, StormMaxUrgent))
	}
	if res.Unreachable > 0 {
		res.Misses = append(res.Misses, fmt.Sprintf("%d events unreachable through the agent inbox API", res.Unreachable))
	}
	if res.Failed > 0 {
		res.Misses = append(res.Misses, fmt.Sprintf("%d events not acknowledged", res.Failed))
	}
	if r := res.Replies; r != nil {
		res.Misses = append(res.Misses, r.misses(res.PerEvent)...)
	}
	res.Pass = len(res.Misses) == 0
	return res, nil
}

func urgentLabels(plan []stormEvent) []string {
	var out []string
	for _, ev := range plan {
		if ev.urgent {
			out = append(out, ev.label)
		}
	}
	return out
}

// loadAvg is the machine's 1-minute load average ("" where /proc is missing).
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// stormMeter counts what the streams carried.
type stormMeter struct {
	mu      sync.Mutex
	replies *StormReplies // the replies mode's counts; nil without
	frames  map[string]int
	wakes   int
	sent    map[string]time.Time     // urgent label → sent
	got     map[string]time.Duration // urgent label → latency of its first frame
}

func (m *stormMeter) sentAt(label string, t time.Time) {
	m.mu.Lock()
	m.sent[label] = t
	m.mu.Unlock()
}

func (m *stormMeter) signal(action, contents string, labels []string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frames[action]++
	if action == "persist" {
		return
	}
	for _, l := range labels {
		if _, done := m.got[l]; done || !strings.Contains(contents, l) {
			continue
		}
		if s, ok := m.sent[l]; ok {
			m.got[l] = at.Sub(s)
		}
	}
}

// inboxCount pages through the thread's records in the agent inbox API (every status)
// and returns how many events they account for: each record counts its coalescedCount,
// but for one superseded by a newer record of its net-state lane, which carries it.
func inboxCount(ctx context.Context, client *http.Client, base, token string, k inbox.ThreadKey, byStatus map[string]int) (int, error) {
	total, cursor := 0, ""
	for range 1000 {
		u := ThreadURL(base, k, "/notifications?status=all&limit=100")
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Notifications []struct {
				Status         string `json:"status"`
				CoalescedCount int    `json:"coalescedCount"`
				SupersededBy   string `json:"supersededBy"`
			} `json:"notifications"`
			NextCursor string `json:"nextCursor"`
		}
		if err := getJSON(ctx, client, u, token, &page); err != nil {
			return 0, fmt.Errorf("list notifications of %s: %w", k, err)
		}
		for _, r := range page.Notifications {
			// A record superseded by a newer one of its lane has its count carried on
			// by that one.
			if r.SupersededBy == "" {
				total += r.CoalescedCount
			}
			byStatus[r.Status]++
		}
		if cursor = page.NextCursor; cursor == "" {
			return total, nil
		}
	}
	return total, fmt.Errorf("list notifications of %s: too many pages", k)
}

// ingest posts one storm event and returns how many records the gateway's answer says
// it made or merged into.
func ingest(ctx context.Context, client *http.Client, base string, r *request) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	req.Header = r.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	var out struct {
		Records int `json:"records"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return 0, fmt.Errorf("read ingest answer: %w", err)
	}
	return out.Records, nil
}

func getJSON(ctx context.Context, client *http.Client, u, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}
