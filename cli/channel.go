package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/channel"
)

const channelUsage = `Usage: gateway channel [flags]

A Claude Code channel: an MCP server over stdin and stdout, for Claude Code to start,
that pushes an agent thread's signals into the session as they arrive
(notifications/claude/channel) and offers the gateway's inbox tools, reply and watch
on that thread. Claude Code's permission prompts become Slack approvals. It follows the
thread's stream of a running gateway and picks up where it left off when the
connection drops or the gateway restarts. The token is the agent's (agents[].token).
Logs go to stderr. See docs/claude-code.md.

Example (.mcp.json):
  {"mcpServers": {"signalgate": {"command": "gateway",
    "args": ["channel", "--agent", "coder", "--resource", "acme/api", "--thread", "acme/api#7"],
    "env": {"SIGNALGATE_URL": "http://127.0.0.1:8080", "SIGNALGATE_AGENT_TOKEN": "dev-only-coder-token"}}}}
  claude --dangerously-load-development-channels server:signalgate

Flags:
`

func channelCmd(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.Writer, stderr io.Writer, lookup func(string) (string, bool), version string) int {
	fs := newFlagSet("channel", channelUsage, stderr)
	c := clientFlags(fs, lookup, envAgentToken)
	agentID := fs.String("agent", "", "agent id")
	resource := fs.String("resource", "", "resource id of the thread")
	thread := fs.String("thread", "", "thread id")
	after := fs.String("after", "latest", "start after this sequence number (0: the whole log; latest: only what comes next)")
	permissions := fs.Bool("permissions", true, "relay Claude Code's permission prompts to Slack approvals (approvals.slack_connector)")
	level := fs.String("log-level", "info", "debug, info, warn or error (to stderr)")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	var lv slog.Level
	err := required([2]string{"agent", *agentID}, [2]string{"resource", *resource}, [2]string{"thread", *thread})
	if err == nil {
		err = c.check()
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil && lv.UnmarshalText([]byte(*level)) != nil {
		err = fmt.Errorf("--log-level: want debug, info, warn or error, got %q", *level)
	}
	var s *channel.Server
	if err == nil {
		s, err = channel.New(channel.Config{URL: c.base, Token: c.token, Agent: *agentID, Resource: *resource, Thread: *thread,
			After: *after, Permissions: *permissions, Version: version, HTTP: c.http,
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))})
	}
	if err != nil {
		fmt.Fprintf(stderr, "gateway channel: %v\n", err)
		return exitConfig
	}
	if err := s.Serve(ctx, &mcp.IOTransport{Reader: stdin, Writer: nopWriteCloser{stdout}}); err != nil {
		fmt.Fprintf(stderr, "gateway channel: %v\n", err)
		return exitFail
	}
	return exitOK
}

// nopWriteCloser is stdout for the MCP transport, which closes what it writes to when
// the session ends; the process's stdout stays open for main.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
