package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
)

// runStorm is `loadgen storm`: the recorded storm against a gateway that runs `loadgen
// storm-config` (tuned), `loadgen storm-config --defaults` or `loadgen storm-config
// --shipped` (the repository's config.yaml with the storm's connectors).
func runStorm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen storm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		u        = fs.String("url", "http://127.0.0.1:8080", "gateway base URL; loopback only")
		octokit  = fs.String("octokit", "connectors/github/testdata/octokit", "@octokit/webhooks-examples checkout (make fixtures)")
		window   = fs.Duration("window", time.Minute, "send the 1,000 events over this long")
		drain    = fs.Duration("drain", 25*time.Second, "count frames this much longer after the last event")
		busy     = fs.Float64("busy", 0.3, "fraction of the time each thread's agent works on its own")
		handle   = fs.Duration("handle", 2*time.Second, "how long a woken agent takes before it finishes the run")
		defaults = fs.Bool("defaults", false, "the gateway runs storm-config --defaults: report only, targets do not fail the run")
		shipped  = fs.Bool("shipped", false, "the gateway runs storm-config --shipped: follow the shipped config's agent; targets fail the run")
		config   = fs.String("config", "config.yaml", "--shipped: the shipped config the gateway's was made from (its first agent and token)")
		asJSON   = fs.Bool("json", false, "print JSON instead of a table")
		replies  = fs.Bool("replies", false, "each woken agent answers every wake with a reply, which the platform fake sends back (storm-config --replies)")
		platform = fs.String("platform", defaultPlatform, "--replies: where the fake Slack and GitHub listen (as given to storm-config)")
		echo     = fs.Duration("echo-delay", 500*time.Millisecond, "--replies: how long after a post the platform sends its event")
		echoSent = fs.Bool("echo-after-sent", false, "--replies: hold each event back until the gateway shows its reply sent")
		baseline = fs.String("baseline", "", "--replies: the JSON result of the same storm without replies; frames per event must not rise")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *defaults && *shipped {
		fmt.Fprintln(stderr, "loadgen storm: --defaults and --shipped are different gateway configs: give one")
		return 2
	}
	cfg := load.StormConfig{URL: *u, OctokitDir: *octokit, Window: *window, Drain: *drain, Busy: *busy,
		Handle: *handle, Tuned: !*defaults && !*shipped, Shipped: *shipped, Replies: *replies, PlatformAddr: *platform,
		EchoDelay: *echo, EchoAfterSent: *echoSent}
	if *shipped {
		sc, err := shippedScenario(*config)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen storm: %v\n", err)
			return 2
		}
		cfg.Scenario = sc
	}
	if *baseline != "" {
		per, err := readBaseline(*baseline)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen storm: %v\n", err)
			return 2
		}
		cfg.Baseline = &per
	}
	res, err := load.RunStorm(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen storm: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		printStorm(stdout, res)
	}
	if !res.Pass && !*defaults {
		return 1
	}
	return 0
}

// stormConfig is `loadgen storm-config [--defaults | --shipped [--config PATH]]`.
func stormConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen storm-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaults := fs.Bool("defaults", false, "today's defaults: no wake budget, mastra summaries")
	shipped := fs.Bool("shipped", false, "the shipped config (--config) as committed, with the storm's GitHub and Slack connectors and without server, storage and log")
	config := fs.String("config", "config.yaml", "--shipped: the shipped config")
	replies := fs.Bool("replies", false, "the connectors reply to the storm's platform fake (loadgen storm --replies)")
	platform := fs.String("platform", defaultPlatform, "--replies: where the fake Slack and GitHub listen")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *defaults && *shipped {
		fmt.Fprintln(stderr, "loadgen storm-config: --defaults and --shipped are different gateway configs: give one")
		return 2
	}
	sc := load.DefaultStormScenario()
	if *replies {
		sc.Platform = "http://" + *platform
	}
	if !*shipped {
		fmt.Fprint(stdout, sc.GatewayConfig(!*defaults))
		return 0
	}
	raw, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen storm-config: %v\n", err)
		return 2
	}
	out, err := sc.ShippedConfig(raw)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen storm-config: %s: %v\n", *config, err)
		return 2
	}
	fmt.Fprint(stdout, out)
	return 0
}

// shippedScenario is the storm following the agent of the shipped config at path, with
// the token the gateway reads for it from this environment.
func shippedScenario(path string) (load.StormScenario, error) {
	sc := load.DefaultStormScenario()
	raw, err := os.ReadFile(path)
	if err != nil {
		return sc, err
	}
	id, token, err := load.ShippedAgent(raw, os.LookupEnv)
	if err != nil {
		return sc, fmt.Errorf("%s: %w", path, err)
	}
	sc.Agent, sc.AgentToken = id, token
	return sc, nil
}

// defaultPlatform is where the replies mode's platform fake listens unless told.
const defaultPlatform = "127.0.0.1:18929"

// readBaseline reads model_visible_per_event from a storm's JSON result.
func readBaseline(path string) (float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read baseline: %w", err)
	}
	var r struct {
		PerEvent *float64 `json:"model_visible_per_event"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.PerEvent == nil {
		return 0, fmt.Errorf("baseline %s: not a storm's JSON result", path)
	}
	return *r.PerEvent, nil
}

func printStorm(w io.Writer, r *load.StormResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	row("storm ("+r.Config+")", "%d events over %d threads, %d acked, %d failed, %.0f s", r.Events, r.Threads, r.Acked, r.Failed, r.Seconds)
	row("model-visible frames", "%d (wake %d, deliver %d) = %.3f per event (target ≤ %.2f)", r.ModelVisible, r.Frames["wake"],
		r.Frames["deliver"], r.PerEvent, load.StormMaxFramesPerEvent)
	row("persisted frames", "%d", r.Frames["persist"])
	row("wakes", "%d", r.Wakes)
	row("urgent latency", "%v ms, worst %.0f ms (target ≤ %s)", r.UrgentMs, r.UrgentWorstMs, load.StormMaxUrgent)
	row("unreachable events", "%d, of which %d made no record (target 0) %v", r.Unreachable, r.NoRecord, r.UnreachableByThread)
	row("records by status", "%v", r.Records)
	row("agent busy", "%.0f %%", 100*r.BusyMeasured)
	row("send lag max", "%.0f ms", r.SendLagMaxMs)
	row("load average 1m", "%s at start, %s at end", r.LoadAvg[0], r.LoadAvg[1])
	if rp := r.Replies; rp != nil {
		row("replies", "%d wakes answered: %d queued, %d refused %v, %d failed", rp.Asked, rp.Queued, rp.Asked-rp.Queued-rp.Failed, rp.Refused, rp.Failed)
		row("replies posted", "%v, %d more than once", rp.Posted, rp.Duplicates)
		row("own replies back", "%d events (%.0f ms after the post), %d made records (target 0), %d not acknowledged", rp.Echoed,
			rp.EchoDelayMs, rp.EchoRecords, rp.EchoFailed)
		if rp.BaselinePerEvent != nil {
			row("frames per event", "%.3f with replies, %.3f without (must not rise)", r.PerEvent, *rp.BaselinePerEvent)
		}
	}
	verdict := "pass"
	if !r.Pass {
		verdict = fmt.Sprintf("miss: %v", r.Misses)
	}
	row("targets", "%s", verdict)
	_ = tw.Flush()
}
