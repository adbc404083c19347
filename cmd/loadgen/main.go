// Command loadgen drives signed GitHub, Slack and generic webhook deliveries into a
// signalgate gateway on this machine, follows every thread's stream, and reports
// throughput, latency, lost and duplicated signals, and the gateway's memory.
//
//	loadgen config > scenario.yaml     # the agents/connectors/routes the gateway needs
//	loadgen --url http://127.0.0.1:8080 --events 20000 --threads 100 --ceiling
//	loadgen --url http://127.0.0.1:8080 --scenario threads10k --json
//	loadgen storm-config [--defaults] > storm.yaml  # the recorded storm's gateway config
//	loadgen storm-config --shipped [--config config.yaml] > storm.yaml  # the shipped config, with the storm's connectors
//	loadgen storm --url http://127.0.0.1:8080 [--defaults | --shipped [--config config.yaml]] [--json]
//	loadgen collect --listen 127.0.0.1:4318  # an OTLP/HTTP trace sink that counts spans
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// report is the JSON output: the gateway run, and the verify-only ceiling when asked.
type report struct {
	Scenario string       `json:"scenario,omitempty"`
	Gateway  *load.Result `json:"gateway"`
	Ceiling  *load.Result `json:"ceiling,omitempty"`
	// Ratio is gateway req/s over ceiling req/s.
	Ratio float64 `json:"ratio,omitempty"`
	// FloorCPU is the storage floor's CPU-µs per event (BenchmarkSQLiteFloor, full)
	// measured beside this run; CostRatio is the gateways' CPU per event over it.
	FloorCPU  float64 `json:"floor_cpu_us_per_event,omitempty"`
	CostRatio float64 `json:"cost_ratio,omitempty"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sc := load.DefaultScenario()
	if len(args) > 0 && args[0] == "config" {
		fs := flag.NewFlagSet("loadgen config", flag.ContinueOnError)
		fs.SetOutput(stderr)
		t := targetFlags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if err := t.apply(&sc, nil); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return 2
		}
		fmt.Fprint(stdout, sc.GatewayConfig())
		return 0
	}
	if len(args) > 0 && args[0] == "storm-config" {
		return stormConfig(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "storm" {
		return runStorm(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "collect" {
		return runCollect(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		urls         = fs.String("url", "http://127.0.0.1:8080", "gateway base URL(s), comma-separated (round-robin); loopback only")
		sources      = fs.String("sources", "github,slack,generic", "sources to send, comma-separated")
		events       = fs.Int("events", 10_000, fmt.Sprintf("events to send (max %d)", load.MaxEvents))
		threads      = fs.Int("threads", 100, "threads the events fan out to")
		subs         = fs.Int("subscribers", 0, "threads followed over SSE (0: all, -1: none)")
		clients      = fs.Int("clients", 16, "concurrent senders")
		rate         = fs.Float64("rate", 0, "events per second (0: as fast as possible)")
		duration     = fs.Duration("duration", 2*time.Minute, "stop sending after this")
		drain        = fs.Duration("drain", 30*time.Second, "wait this long for the last frames")
		busy         = fs.Float64("busy", 0, "fraction of followed threads whose agent opens/finishes runs")
		retries      = fs.Int("retries", 0, "resend a failed delivery (same delivery id) this many times")
		pids         = fs.String("pid", "", "gateway pids, comma-separated (every replica): CPU per event sums them, RSS is the first's (default: RSS from its /metrics, no CPU)")
		dbPID        = fs.Int("db-pid", 0, "the database server's (PostgreSQL postmaster's) pid: its CPU per event, children included")
		clkTck       = fs.Int("clk-tck", load.DefaultClockTicks, "clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK)")
		floorCPU     = fs.Float64("floor-cpu-us", 0, "the storage floor's CPU-µs per event (BenchmarkSQLiteFloor full), for cost_ratio")
		ceiling      = fs.Bool("ceiling", false, "first run the same traffic against an in-process verify-only handler")
		asJSON       = fs.Bool("json", false, "print JSON instead of a table")
		token        = fs.String("agent-token", sc.AgentToken, "the stream agent's bearer token")
		watches      = fs.Int("watches", 0, fmt.Sprintf("live watches to create before sending, none matching (max %d)", load.MaxWatches))
		watchThreads = fs.Bool("watch-threads", false, "each Slack thread also watches its channel, so its events match a watch")
		preset       = fs.String("scenario", "", "a named row of the load table, setting the flags it names: "+strings.Join(scenarioNames(), ", "))
		target       = targetFlags(fs)
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: loadgen [config] [flags] | loadgen storm-config [--defaults] | loadgen storm [flags] | loadgen collect --listen ADDR\n\n"+
			"`loadgen config [--target langgraph|a2a ...]` prints the gateway config the traffic expects; `loadgen storm` runs the recorded storm;\n"+
			"`loadgen collect` counts the spans an OTLP/HTTP exporter sends it.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *preset != "" {
		if err := applyScenario(fs, *preset); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
			return 2
		}
	}
	sc.AgentToken = *token
	if err := target.apply(&sc, urls); err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	pidList, err := parsePIDs(*pids)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}
	cfg := load.Config{
		Scenario: sc, URLs: split(*urls), Sources: split(*sources), Threads: *threads, Subscribers: *subs,
		Events: *events, Duration: *duration, Rate: *rate, Clients: *clients, Drain: *drain, Busy: *busy,
		Retries: *retries, PIDs: pidList, DBPID: *dbPID, ClockTicks: *clkTck, Watches: *watches, WatchThreads: *watchThreads,
	}
	if sc.Runtime != nil {
		cfg.RuntimeUpstream = target.upstreamURL()
	}
	rep := report{Scenario: *preset, FloorCPU: *floorCPU}
	if *ceiling {
		c, err := runCeiling(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: ceiling: %v\n", err)
			return 1
		}
		rep.Ceiling = c
	}
	res, err := load.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 1
	}
	rep.Gateway = res
	if rep.Ceiling != nil && rep.Ceiling.ReqPerSec > 0 {
		rep.Ratio = res.ReqPerSec / rep.Ceiling.ReqPerSec
	}
	if rep.FloorCPU > 0 && res.GatewayCPU > 0 {
		rep.CostRatio = res.GatewayCPU / rep.FloorCPU
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printTable(stdout, rep)
	}
	if res.Lost > 0 || res.Duplicated > 0 || res.DupFrames > 0 || res.Conflicting > 0 {
		return 1
	}
	return 0
}

// runCeiling serves the verify-only handler on a loopback port and sends it the same
// events, without streams.
func runCeiling(ctx context.Context, cfg load.Config) (*load.Result, error) {
	h, err := load.VerifyOnly(cfg.Scenario)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg.URLs = []string{"http://" + ln.Addr().String()}
	cfg.Subscribers, cfg.Busy, cfg.PIDs, cfg.DBPID = -1, 0, nil, 0
	return load.Run(ctx, cfg)
}

// parsePIDs reads --pid: comma-separated positive pids.
func parsePIDs(s string) ([]int, error) {
	var out []int
	for _, p := range split(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--pid: %q is not a pid", p)
		}
		out = append(out, n)
	}
	return out, nil
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func printTable(w io.Writer, rep report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cols := []*load.Result{rep.Gateway}
	head := "\tgateway"
	if rep.Ceiling != nil {
		cols = append(cols, rep.Ceiling)
		head += "\tverify-only"
	}
	fmt.Fprintln(tw, "metric"+head)
	row := func(name string, f func(r *load.Result) string) {
		line := name
		for _, r := range cols {
			line += "\t" + f(r)
		}
		fmt.Fprintln(tw, line)
	}
	ms := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	row("events sent / acked / failed", func(r *load.Result) string { return fmt.Sprintf("%d / %d / %d", r.Sent, r.Acked, r.Failed) })
	row("ingest req/s", func(r *load.Result) string { return fmt.Sprintf("%.0f", r.ReqPerSec) })
	row("ingest p50 / p90", func(r *load.Result) string { return ms(r.Ingest.P50) + " / " + ms(r.Ingest.P90) })
	row("ingest p99 / max", func(r *load.Result) string { return ms(r.Ingest.P99) + " / " + ms(r.Ingest.Max) })
	g := rep.Gateway
	single := func(name, v string) {
		line := name + "\t" + v
		if rep.Ceiling != nil {
			line += "\t-"
		}
		fmt.Fprintln(tw, line)
	}
	single("end-to-end p50 / p99", ms(g.EndToEnd.P50)+" / "+ms(g.EndToEnd.P99))
	single("threads / followed", fmt.Sprintf("%d / %d", g.Threads, g.Subscribed))
	single("frames per thread min/avg/max", fmt.Sprintf("%d / %.1f / %d", g.FramesMin, g.FramesAvg, g.FramesMax))
	single("lost / duplicated", fmt.Sprintf("%d / %d", g.Lost, g.Duplicated+g.DupFrames+g.Conflicting))
	single("gateway RSS (last / peak)", fmt.Sprintf("%.1f MiB / %.1f MiB", float64(g.RSSBytes)/(1<<20), float64(g.RSSPeakBytes)/(1<<20)))
	if g.GatewayCPU > 0 {
		cpu := fmt.Sprintf("%.0f µs", g.GatewayCPU)
		if g.DBCPU > 0 {
			cpu += fmt.Sprintf(" (database %.0f µs)", g.DBCPU)
		}
		single("gateway CPU per event", cpu)
	}
	if rep.CostRatio > 0 {
		single("cost ratio (CPU / floor)", fmt.Sprintf("%.2f (floor %.0f µs)", rep.CostRatio, rep.FloorCPU))
	}
	if lg := g.Runtime; lg != nil {
		single("ingest → "+lg.Kind+" run start p50 / p99", ms(lg.RunStart.P50)+" / "+ms(lg.RunStart.P99)+fmt.Sprintf(" (%d runs)", lg.Runs))
		single(lg.Kind+" requests per signal", fmt.Sprintf("%.2f (%d requests)", lg.PerSignal, lg.Total))
		for _, r := range load.SortedRoutes(lg.Requests) {
			single("  "+r, fmt.Sprint(lg.Requests[r]))
		}
	}
	single("statuses", fmt.Sprint(g.Status))
	if rep.Ceiling != nil {
		single("gateway / verify-only req/s", fmt.Sprintf("%.2f", rep.Ratio))
	}
	_ = tw.Flush()
}

// runtimeTarget is --target and the flags of a runtime's target.
type runtimeTarget struct {
	kind, upstream, proxy, callback *string
}

// The runtimes' defaults: where the harness listens, where loadgen's proxy does.
var runtimeDefaults = map[string]struct{ upstream, proxy string }{
	load.RuntimeLangGraph: {"http://127.0.0.1:18624", "127.0.0.1:18625"},
	load.RuntimeA2A:       {"http://127.0.0.1:18641", "127.0.0.1:18642"},
}

func targetFlags(fs *flag.FlagSet) runtimeTarget {
	return runtimeTarget{
		kind: fs.String("target", "stream", "the scenario agent's target kind: stream, langgraph (the interop/langgraph server's echo graph) "+
			"or a2a (the interop/a2a server's echo agent)"),
		upstream: fs.String("runtime-url", "", "langgraph, a2a: the runtime's server (default http://127.0.0.1:18624 for langgraph, :18641 for a2a)"),
		proxy: fs.String("runtime-proxy", "", "langgraph, a2a: where loadgen serves the request-counting proxy the gateway's config points at "+
			"(default 127.0.0.1:18625 for langgraph, :18642 for a2a; an a2a harness's PUBLIC_URL must be it)"),
		callback: fs.String("callback-url", "", "langgraph, a2a: the gateway's base URL as the runtime reaches it (default: the first --url)"),
	}
}

// upstreamURL is --runtime-url, or the kind's default.
func (r runtimeTarget) upstreamURL() string {
	if *r.upstream != "" {
		return *r.upstream
	}
	return runtimeDefaults[*r.kind].upstream
}

// apply sets the scenario's target; urls (nil for `config`) are the gateway URLs.
func (r runtimeTarget) apply(sc *load.Scenario, urls *string) error {
	switch *r.kind {
	case "stream":
		return nil
	case load.RuntimeLangGraph, load.RuntimeA2A:
	default:
		return fmt.Errorf("--target: unknown %q (want stream, langgraph or a2a)", *r.kind)
	}
	proxy := *r.proxy
	if proxy == "" {
		proxy = runtimeDefaults[*r.kind].proxy
	}
	cb := *r.callback
	if cb == "" && urls != nil {
		cb = split(*urls)[0]
	}
	if cb == "" {
		cb = "http://127.0.0.1:8080"
	}
	sc.Runtime = &load.Runtime{Kind: *r.kind, URL: "http://" + proxy, CallbackURL: cb}
	return nil
}

// scenarios are the rows of the load table, by name: the flags each sets unless given
// explicitly.
func scenarios() map[string][]string {
	return map[string][]string{
		// Throughput with fsync, next to the verify-only ceiling.
		"max": {"--events", "20000", "--threads", "100", "--clients", "32", "--ceiling"},
		// Latency at a fixed offered rate.
		"rate1000": {"--rate", "1000", "--events", "20000", "--threads", "100", "--clients", "64"},
		"rate50":   {"--rate", "50", "--events", "1500", "--threads", "20", "--clients", "8"},
		// Many threads, a tenth of them followed: dispatch and memory per idle thread.
		"threads10k": {"--events", "20000", "--threads", "10000", "--subscribers", "1000", "--clients", "32"},
		// The max row with 100,000 live watches no event matches, then with every Slack
		// thread also watching its channel (each Slack event matches a watch and a route).
		"watches100k": {"--events", "20000", "--threads", "100", "--clients", "32", "--watches", "100000"},
		"watched":     {"--events", "20000", "--threads", "100", "--clients", "32", "--watches", "100000", "--watch-threads"},
	}
}

func scenarioNames() []string {
	all := scenarios()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// applyScenario sets the named scenario's flags that were not given explicitly.
func applyScenario(fs *flag.FlagSet, name string) error {
	args, ok := scenarios()[name]
	if !ok {
		return fmt.Errorf("--scenario: unknown %q (one of %s)", name, strings.Join(scenarioNames(), ", "))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for i := 0; i < len(args); i++ {
		name := strings.TrimPrefix(args[i], "--")
		value := "true"
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			value = args[i+1]
			i++
		}
		if given[name] {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
	}
	return nil
}
