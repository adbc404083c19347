package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// LangGraph makes the scenario's agent a langgraph target (its runtime the LangGraph
// server of interop/langgraph, assistant echo): the gateway calls URL (the counting
// proxy Run serves in front of the server) and the server posts runs' webhooks to
// CallbackURL (the gateway).
type LangGraph struct {
	URL         string // where the gateway reaches LangGraph: the proxy's address
	CallbackURL string // the gateway's base URL as LangGraph reaches it
}

// LangGraphCallbackToken keys the scenario's webhook URLs.
const LangGraphCallbackToken = "loadgen-langgraph-callback-token"

// target is the scenario agent's target mapping.
func (s Scenario) target() string {
	if s.LangGraph == nil {
		return "{ kind: stream }"
	}
	return fmt.Sprintf("{ kind: langgraph, url: %q, assistant_id: echo, callback_url: %q, callback_token: %q }",
		s.LangGraph.URL, s.LangGraph.CallbackURL, LangGraphCallbackToken)
}

// LangGraphRun is what Run measures of a langgraph target (Config.LangGraphUpstream).
type LangGraphRun struct {
	// RunStart is from each event's send to the start of the LangGraph run that took it
	// (its node's start, response_metadata.node_started_at), for the events found.
	RunStart Latency `json:"run_start"`
	Runs     int     `json:"runs_measured"`
	// Requests are the gateway's requests to LangGraph by method and route, and
	// PerSignal their total over the signals delivered.
	Requests  map[string]int `json:"requests"`
	Total     int            `json:"requests_total"`
	PerSignal float64        `json:"requests_per_signal"`
}

// counter is a reverse proxy to the LangGraph server that counts requests by route.
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
		return nil, fmt.Errorf("--langgraph-url: %w", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen for the LangGraph proxy on %s: %w", listen, err)
	}
	c := &counter{counts: map[string]int{}, addr: ln.Addr().String()}
	proxy := httputil.NewSingleHostReverseProxy(u)
	c.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.counts[r.Method+" "+routeShape.ReplaceAllString(r.URL.Path, "{id}")]++
		c.total++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
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
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(cfg.LangGraphUpstream, "/")+"/threads/"+langgraph.ThreadID(k), nil)
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
