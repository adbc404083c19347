package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
)

// runStorm is `loadgen storm`: the recorded storm of issue 16 against a gateway that
// runs `loadgen storm-config` (tuned) or `loadgen storm-config --defaults`.
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
		asJSON   = fs.Bool("json", false, "print JSON instead of a table")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	res, err := load.RunStorm(ctx, load.StormConfig{URL: *u, OctokitDir: *octokit, Window: *window, Drain: *drain, Busy: *busy,
		Handle: *handle, Tuned: !*defaults})
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

// stormConfig is `loadgen storm-config [--defaults]`.
func stormConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen storm-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaults := fs.Bool("defaults", false, "today's defaults: no wake budget, mastra summaries")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Fprint(stdout, load.DefaultStormScenario().GatewayConfig(!*defaults))
	return 0
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
	verdict := "pass"
	if !r.Pass {
		verdict = fmt.Sprintf("miss: %v", r.Misses)
	}
	row("targets", "%s", verdict)
	_ = tw.Flush()
}
