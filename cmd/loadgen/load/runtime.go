package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/signalgate/signalgate/targets/langgraph"
)

// Runtime makes the scenario's agent the target of an agent runtime: langgraph (the
// LangGraph server of interop/langgraph, assistant echo) or a2a (the echo agent of
// interop/a2a). The gateway calls URL (the counting proxy Run serves in front of the
// runtime) and the runtime posts its runs' webhooks or its tasks' push notifications to
// CallbackURL (the gateway).
type Runtime struct {
	Kind        string // RuntimeLangGraph or RuntimeA2A
	URL         string // where the gateway reaches the runtime: the proxy's address
	CallbackURL string // the gateway's base URL as the runtime reaches it
}

// The runtimes the load tool drives.
const (
	RuntimeLangGraph = "langgraph"
	RuntimeA2A       = "a2a"
)

// LangGraphCallbackToken keys the scenario's webhook URLs.
const LangGraphCallbackToken = "loadgen-langgraph-callback-token"

// target is the scenario agent's target mapping.
func (s Scenario) target() string {
	switch {
	case s.Runtime == nil:
		return "{ kind: stream }"
	case s.Runtime.Kind == RuntimeA2A:
		// The harness's echo agent, its card read through the proxy (the harness's
		// PUBLIC_URL must be the proxy's, so the card's endpoint is too).
		return fmt.Sprintf("{ kind: a2a, url: %q, callback_url: %q }", strings.TrimRight(s.Runtime.URL, "/")+"/echo", s.Runtime.CallbackURL)
	}
	return fmt.Sprintf("{ kind: langgraph, url: %q, assistant_id: echo, callback_url: %q, callback_token: %q }",
		s.Runtime.URL, s.Runtime.CallbackURL, LangGraphCallbackToken)
}

// RuntimeRun is what Run measures of a runtime's target (Config.RuntimeUpstream).
type RuntimeRun struct {
	Kind string `json:"kind"`
	// RunStart is from each event's send to the start of the runtime's work on it: the
	// LangGraph run's node (response_metadata.node_started_at), the A2A agent's executor
	// handed the message (the harness's record of it), for the events found.
	RunStart Latency `json:"run_start"`
	Runs     int     `json:"runs_measured"`
	// Requests are the gateway's requests to the runtime by method and route (and
	// JSON-RPC method), and PerSignal their total over the signals delivered.
	Requests  map[string]int `json:"requests"`
	Total     int            `json:"requests_total"`
	PerSignal float64        `json:"requests_per_signal"`
}

// measureRuntime reads the runtime's record of the run's events.
func measureRuntime(ctx context.Context, cfg Config, tr *tracker) (Latency, int, error) {
	if cfg.Runtime.Kind == RuntimeA2A {
		return measureA2A(ctx, cfg, tr)
	}
	return measureLangGraph(ctx, cfg, tr)
}

// counter is a reverse proxy to the runtime that counts requests by route (a JSON-RPC
// request by its method too).
type counter struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
	srv    *http.Server
	addr   string // where it listens
}

// routeShape shows a request's route with its ids as placeholders.
var routeShape = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func startCounter(listen, upstream string) (*counter, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("--runtime-url: %w", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen for the runtime's proxy on %s: %w", listen, err)
	}
	c := &counter{counts: map[string]int{}, addr: ln.Addr().String()}
	proxy := httputil.NewSingleHostReverseProxy(u)
	c.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + routeShape.ReplaceAllString(r.URL.Path, "{id}")
		if strings.HasSuffix(r.URL.Path, "/jsonrpc") {
			route += " " + rpcMethod(r)
		}
		c.mu.Lock()
		c.counts[route]++
		c.total++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// rpcMethod is the JSON-RPC method of r, whose body is read and put back.
func rpcMethod(r *http.Request) string {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var m struct {
		Method string `json:"method"`
	}
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return "?"
	}
	return m.Method
}

func (c *counter) snapshot() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out, c.total
}

// quiet waits until no request has reached the proxy for settle (the gateway has read
// the last runs' ends), or until limit.
func (c *counter) quiet(ctx context.Context, settle, limit time.Duration) {
	deadline := time.Now().Add(limit)
	_, last := c.snapshot()
	still := time.Duration(0)
	const step = 250 * time.Millisecond
	for still < settle && time.Now().Before(deadline) {
		t := time.NewTimer(step)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if _, n := c.snapshot(); n == last {
			still += step
		} else {
			last, still = n, 0
		}
	}
}

// measureLangGraph reads the subscribed threads from the LangGraph server and matches
// each tracked event's marker to the run that took it: the first AI message after the
// human message carrying it says when that run's node began.
func measureLangGraph(ctx context.Context, cfg Config, tr *tracker) (Latency, int, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	var lat []time.Duration
	tr.mu.Lock()
	sent := make(map[string]time.Time, len(tr.sentAt))
	for m, at := range tr.sentAt {
		if tr.acked[m] {
			sent[m] = at
		}
	}
	tr.mu.Unlock()
	var errs []error
	for i := 0; i < cfg.Subscribers; i++ {
		_, k := cfg.ThreadFor(i, cfg.Sources)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(cfg.RuntimeUpstream, "/")+"/threads/"+langgraph.ThreadID(k), nil)
		if err != nil {
			return Latency{}, 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var th struct {
			Values struct {
				Messages []struct {
					Type     string          `json:"type"`
					Content  json.RawMessage `json:"content"`
					Response struct {
						NodeStartedAt int64 `json:"node_started_at"`
					} `json:"response_metadata"`
				} `json:"messages"`
			} `json:"values"`
		}
		err = json.NewDecoder(resp.Body).Decode(&th)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("read LangGraph thread of %s: HTTP %d: %v", k, resp.StatusCode, err))
			continue
		}
		var waiting []string // markers of human messages no AI message followed yet
		for _, m := range th.Values.Messages {
			switch m.Type {
			case "human":
				var text string
				_ = json.Unmarshal(m.Content, &text)
				waiting = append(waiting, tr.markerRE.FindAllString(text, -1)...)
			case "ai":
				started := time.UnixMilli(m.Response.NodeStartedAt)
				for _, mk := range waiting {
					if at, ok := sent[mk]; ok && m.Response.NodeStartedAt > 0 {
						lat = append(lat, started.Sub(at))
					}
				}
				waiting = nil
			}
		}
	}
	return percentiles(lat), len(lat), errors.Join(errs...)
}

// SortedRoutes lists a count map's keys in order (for printing).
func SortedRoutes(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// measureA2A reads what the harness's echo agent was handed (GET /test/received: each
// message with when its executor got it) and matches each tracked event's marker to the
// message that carried it.
func measureA2A(ctx context.Context, cfg Config, tr *tracker) (Latency, int, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(cfg.RuntimeUpstream, "/")+"/test/received", nil)
	if err != nil {
		return Latency{}, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Latency{}, 0, fmt.Errorf("read what the A2A agent received: %w", err)
	}
	defer resp.Body.Close()
	var got []struct {
		At    int64  `json:"at"`
		Agent string `json:"agent"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		return Latency{}, 0, fmt.Errorf("read what the A2A agent received: HTTP %d: %v", resp.StatusCode, err)
	}
	tr.mu.Lock()
	sent := make(map[string]time.Time, len(tr.sentAt))
	for m, at := range tr.sentAt {
		if tr.acked[m] {
			sent[m] = at
		}
	}
	tr.mu.Unlock()
	var lat []time.Duration
	for _, m := range got {
		if m.Agent != "echo" {
			continue
		}
		for _, p := range m.Parts {
			for _, mk := range tr.markerRE.FindAllString(p.Text, -1) {
				if at, ok := sent[mk]; ok {
					lat = append(lat, time.UnixMilli(m.At).Sub(at))
				}
			}
		}
	}
	return percentiles(lat), len(lat), nil
}
