package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/signalgate/signalgate/agent"
)

const runsFinishUsage = `Usage: gateway runs finish [flags]

Ends a run of an agent thread through the agent API, as the agent does when its turn
is done (POST …/runs/{runId}/finish). While a run is open (until it ends, or its lease,
agents[].run_lease, lapses without a heartbeat) the thread is active, and new
notifications reach it as summaries; once it ends, the thread is idle and what waited is
sent. Without --run it ends the thread's live run (found with POST …/runs, which opens
one when there is none: that one is ended at once). The token is the agent's.

Example:
  export SIGNALGATE_AGENT_TOKEN=dev-only-coder-token
  gateway runs finish --agent coder --resource acme/api --thread 'acme/api#7'

Flags:
`

func runsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	if code, ok := subcommand(args, "finish", runsFinishUsage, stderr); !ok {
		return code
	}
	fs := newFlagSet("runs finish", runsFinishUsage, stderr)
	c := clientFlags(fs, lookup, envAgentToken)
	agentID := fs.String("agent", "", "agent id")
	resource := fs.String("resource", "", "resource id of the thread")
	thread := fs.String("thread", "", "thread id")
	runID := fs.String("run", "", "the run to end (default: the thread's live run)")
	status := fs.String("status", agent.RunFinished, "finished or aborted")
	if err := fs.Parse(args[1:]); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway runs finish: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	err := required([2]string{"agent", *agentID}, [2]string{"resource", *resource}, [2]string{"thread", *thread})
	if err == nil {
		err = c.check()
	}
	if err == nil && *status != agent.RunFinished && *status != agent.RunAborted {
		err = fmt.Errorf("--status: want %s or %s, got %q", agent.RunFinished, agent.RunAborted, *status)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway runs finish: %v\n", err)
		return exitConfig
	}
	where := *agentID + "/" + *resource + "/" + *thread
	run, live, err := finishRun(ctx, c, threadPath(*agentID, *resource, *thread), *runID, *status)
	if err != nil {
		fmt.Fprintf(stderr, "gateway runs finish: %v\n", err)
		return exitFail
	}
	if !live {
		fmt.Fprintf(stdout, "no run was open on %s; the thread is idle\n", where)
		return exitOK
	}
	fmt.Fprintf(stdout, "run %s %s on %s; the thread is idle\n", run.ID, run.Status, where)
	return exitOK
}

// finishRun ends run id of the thread at path, or its live run when id is "". live is
// false when no run was open: POST …/runs (the agent API's only way to learn the live
// run) then opened one, which is ended at once so the thread is left as it was.
func finishRun(ctx context.Context, c *client, path, id, status string) (run agent.Run, live bool, err error) {
	live = true
	if id == "" {
		var open agent.Run
		code, err := c.doStatus(ctx, http.MethodPost, path+"/runs", nil, &open)
		if err != nil {
			return agent.Run{}, false, fmt.Errorf("find the live run: %w", err)
		}
		id, live = open.ID, code != http.StatusCreated
	}
	if err := c.do(ctx, http.MethodPost, path+"/runs/"+url.PathEscape(id)+"/finish", map[string]string{"status": status}, &run); err != nil {
		return agent.Run{}, false, fmt.Errorf("end run %s: %w", id, err)
	}
	return run, live, nil
}
