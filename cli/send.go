package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

const sendUsage = `Usage: gateway send [flags]

Posts a notification to an agent thread through the agent API, the way a connector's
event would arrive: deduplicated, coalesced and decided by the policy. For trying the
gateway out and for scripts. The token is the agent's (agents[].token).

A notification delivered to an idle thread wakes it: a run opens, and until the run
ends (the agent finishes it, or its lease lapses) the thread is active and the next
notifications arrive as summaries. --finish first ends the thread's live run, as the
agent would at the end of its turn (see gateway runs finish), so this one finds the
thread idle.

Example:
  export SIGNALGATE_AGENT_TOKEN=dev-only-coder-token
  gateway send --agent coder --resource acme/api --thread 'acme/api#7' \
    --kind review-requested --priority high --summary "Jane asked you to review #7"

Flags:
`

func sendCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("send", sendUsage, stderr)
	c := clientFlags(fs, lookup, envAgentToken)
	agentID := fs.String("agent", "", "agent id")
	resource := fs.String("resource", "", "resource id of the thread")
	thread := fs.String("thread", "", "thread id")
	kind := fs.String("kind", "", "notification kind, e.g. ci-failure")
	summary := fs.String("summary", "", "what the agent reads")
	priority := fs.String("priority", "", "low, medium (default), high or urgent")
	source := fs.String("source", "cli", "notification source")
	dedupe := fs.String("dedupe-key", "", "merge into a pending notification with this dedupe key")
	coalesce := fs.String("coalesce-key", "", "merge into a pending notification with this coalesce key")
	finish := fs.Bool("finish", false, "first end the thread's live run, so the thread is idle")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway send: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	err := required([2]string{"agent", *agentID}, [2]string{"resource", *resource}, [2]string{"thread", *thread},
		[2]string{"kind", *kind}, [2]string{"summary", *summary})
	if err == nil {
		err = c.check()
	}
	if err == nil && *priority != "" {
		if _, perr := inbox.ParsePriority(*priority); perr != nil {
			err = fmt.Errorf("--priority: %w", perr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway send: %v\n", err)
		return exitConfig
	}
	path := threadPath(*agentID, *resource, *thread)
	if *finish {
		run, live, err := finishRun(ctx, c, path, "", agent.RunFinished)
		if err != nil {
			fmt.Fprintf(stderr, "gateway send: %v\n", err)
			return exitFail
		}
		if live {
			fmt.Fprintf(stdout, "ended run %s\n", run.ID)
		}
	}
	body := map[string]any{"source": *source, "kind": *kind, "summary": *summary, "priority": *priority,
		"dedupeKey": *dedupe, "coalesceKey": *coalesce}
	var out struct {
		EventID   string         `json:"eventId"`
		Duplicate bool           `json:"duplicate"`
		RecordID  string         `json:"recordId"`
		Merged    bool           `json:"merged"`
		Decision  inbox.Decision `json:"decision"`
	}
	if err := c.do(ctx, http.MethodPost, path+"/notifications", body, &out); err != nil {
		fmt.Fprintf(stderr, "gateway send: %v\n", err)
		return exitFail
	}
	verb := "created"
	if out.Merged {
		verb = "merged into"
	}
	fmt.Fprintf(stdout, "%s record %s on %s/%s/%s (event %s)\n", verb, out.RecordID, *agentID, *resource, *thread, out.EventID)
	fmt.Fprintf(stdout, "decision: %s — %s\n", out.Decision.Action, out.Decision.Reason)
	return exitOK
}
