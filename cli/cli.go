// Package cli is the gateway command's command line: each subcommand's flags, usage,
// output and exit code. serve, migrate, check and explain run package gateway; replay,
// send, tail and runs call a running gateway's HTTP APIs; slack manifest and github
// webhook print a provider's setup for a configured connector.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/gateway"
)

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2
)

// Run runs the command line args (without the program's name) and returns the exit
// code: 0 done, 1 failed, 2 a usage or config error. ctx ends the command (serve shuts
// down); lookup reads the environment; version is the build's ("dev" for a
// development build).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool), version string) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		// gateway --help lists the commands; gateway serve --help, serve's flags.
		cmd = "help"
	}
	switch cmd {
	case "serve":
		return serveCmd(ctx, args, stdout, stderr, lookup, version)
	case "migrate":
		return migrateCmd(ctx, args, stdout, stderr, lookup)
	case "check":
		return checkCmd(ctx, args, stdout, stderr, lookup)
	case "explain":
		return explainCmd(ctx, args, os.Stdin, stdout, stderr, lookup)
	case "replay":
		return replayCmd(ctx, args, stdout, stderr, lookup)
	case "deliver":
		return deliverCmd(ctx, args, stdout, stderr, lookup)
	case "send":
		return sendCmd(ctx, args, stdout, stderr, lookup)
	case "tail":
		return tailCmd(ctx, args, stdout, stderr, lookup)
	case "channel":
		return channelCmd(ctx, args, os.Stdin, stdout, stderr, lookup, version)
	case "runs":
		return runsCmd(ctx, args, stdout, stderr, lookup)
	case "reload":
		return reloadCmd(ctx, args, stdout, stderr, lookup)
	case "health":
		return healthCmd(ctx, args, stdout, stderr, lookup)
	case "slack":
		return slackCmd(args, stdout, stderr, lookup)
	case "github":
		return githubCmd(args, stdout, stderr, lookup)
	case "version":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = func() { fmt.Fprint(stderr, "Usage: gateway version\n\nExample:\n  gateway version\n") }
		if err := fs.Parse(args); err != nil {
			return flagExit(err)
		}
		fmt.Fprintf(stdout, "signalgate %s\n", version)
		return exitOK
	case "help", "-h", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "gateway: unknown command %q\n\n", cmd)
	usage(stderr)
	return exitConfig
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: gateway [command] [flags]

Commands:
  serve     run the gateway (the default command)
  migrate   apply database migrations and exit
  check     validate a config file and print what it would run (--connect: try its connections)
  explain   dry-run an event against the routes, inbox and policy (reads the database)
  reload    make a running gateway re-read its config file and secret files (admin API)
  health    exit 0 when a running gateway is ready (a container's health check)
  replay    replay stored events through today's routes (admin API)
  send      post a notification to an agent thread (agent API)
  deliver   sign and post a connector's sample event, as its sender would, and show what the gateway did
  tail      follow an agent thread's stream in the terminal (agent API)
  channel   a Claude Code channel: an MCP server pushing a thread's signals into the session
  runs finish      end an agent thread's run, as the agent does when its turn is done (agent API)
  slack manifest   print a Slack app manifest for a Slack connector
  github webhook   print the GitHub webhook settings for a GitHub connector
  version   print the version
  help      print this list

serve, migrate, check, explain, slack and github take --config (default: $SIGNALGATE_CONFIG or
config.yaml); reload, replay, send, tail and runs take --url and a token ($SIGNALGATE_URL,
$SIGNALGATE_ADMIN_TOKEN, $SIGNALGATE_AGENT_TOKEN); health takes --url alone.
Run "gateway <command> --help" for its flags and an example.
`)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// commonFlags registers --config and parses; it prints help with an example.
func commonFlags(name, example string, args []string, stderr io.Writer, lookup func(string) (string, bool)) (*string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := "config.yaml"
	if v, ok := lookup("SIGNALGATE_CONFIG"); ok && v != "" {
		def = v
	}
	path := fs.String("config", def, "path to the config file")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gateway %s [flags]\n\nExample:\n  %s\n\nFlags:\n", name, example)
		fs.PrintDefaults()
	}
	return path, fs.Parse(args)
}

func loadOrReport(path string, stderr io.Writer, lookup func(string) (string, bool)) (*gateway.Config, int) {
	cfg, err := gateway.LoadConfig(path, lookup)
	if err != nil {
		var ce *gateway.ConfigError
		if errors.As(err, &ce) {
			for _, p := range ce.Problems {
				fmt.Fprintf(stderr, "%s: %s\n", path, p)
			}
			return nil, exitConfig
		}
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return nil, exitConfig
	}
	return cfg, exitOK
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool), version string) int {
	fs := newFlagSet("serve", serveUsage, stderr)
	path := configFlag(fs, lookup)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, serveEnvironment)
		}
		return flagExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway serve: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	cfg, code := loadOrReport(*path, stderr, lookup)
	if cfg == nil {
		return code
	}
	log := gateway.NewLogger(cfg.Log, stderr)
	gw := gateway.New(cfg, log)
	gw.ConfigPath, gw.Lookup, gw.Version = *path, lookup, version
	// SIGHUP re-reads the config file; caught before Open, so it never ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := gw.Open(ctx); err != nil {
		log.Error("start failed", "component", "gateway", "error", err.Error())
		return exitFail
	}
	fmt.Fprintf(stdout, "signalgate %s listening on http://%s\n", version, gw.Addr())
	fmt.Fprintf(stdout, "console: http://%s%s — %s\n", gw.Addr(), console.Prefix, signInHint(cfg.Admin.Tokens))
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-hup:
			_ = gw.Reload(ctx) // logged and counted by Reload
		}
	}
	log.Info("shutting down", "component", "gateway", "grace", cfg.Server.ShutdownGrace.String())
	if err := gw.Close(); err != nil {
		log.Error("shutdown", "component", "gateway", "error", err.Error())
		return exitFail
	}
	log.Info("stopped", "component", "gateway")
	return exitOK
}

const serveUsage = `Usage: gateway serve [flags]

Runs the gateway in the foreground until SIGINT or SIGTERM. POST /-/reload (gateway
reload) or SIGHUP re-reads the config file without a restart.

Example:
  gateway serve --config config.local.yaml

Flags:
`

// serveEnvironment follows serve's flags in its help: the variables it reads.
const serveEnvironment = `
Environment:
  SIGNALGATE_CONFIG           the config file when --config is not given (default config.yaml)
  every ${VAR} the file names, read once at start: a running gateway keeps the
  environment it started with (for a secret that changes, use <key>_file: every reload
  reads the file again). The shipped config.yaml names:
  SIGNALGATE_LISTEN           server.listen (default 127.0.0.1:8080)
  SIGNALGATE_STORAGE_DRIVER   storage.driver: sqlite (default) or postgres, with
  SIGNALGATE_DSN              storage.dsn (default data/signalgate.db)
  SIGNALGATE_ADMIN_TOKEN      admin.tokens[0].token (default a dev-only- token, loopback only)
  CODER_AGENT_TOKEN           agents[0].token (default a dev-only- token, loopback only)
  SIGNALGATE_CONSOLE_KEY      console.session_key (default a random key per process)
  and, once you uncomment them, GITHUB_WEBHOOK_SECRET, GITHUB_WEBHOOK_SECRET_OLD,
  GITHUB_TOKEN, SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, IMAP_PASSWORD,
  BILLING_WEBHOOK_SECRET, HOOK_SECRET, LANGGRAPH_CALLBACK_TOKEN and OTLP_API_KEY.
  OTEL_*                      OpenTelemetry's variables: OTEL_EXPORTER_OTLP_ENDPOINT turns
                              tracing on (the telemetry: block wins; docs/telemetry.md)
`

// signInHint says which admin token signs in to the console. A token's value is shown
// only when it is a publicly known dev-only- token (which serves on loopback alone);
// otherwise only the tokens' names are.
func signInHint(tokens []admin.Token) string {
	if len(tokens) == 0 {
		return "no admin.tokens are configured, so nobody can sign in"
	}
	names := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if v := t.Token.Reveal(); strings.HasPrefix(v, gateway.DevTokenPrefix) {
			return fmt.Sprintf("sign in with admin token %q: %s (a public dev token, accepted on loopback only; the shipped config takes yours from SIGNALGATE_ADMIN_TOKEN)", t.Name, v)
		}
		names = append(names, t.Name)
	}
	return "sign in with an admin token (admin.tokens: " + strings.Join(names, ", ") + ")"
}

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	path, err := commonFlags("migrate", "gateway migrate --config config.yaml", args, stderr, lookup)
	if err != nil {
		return flagExit(err)
	}
	cfg, code := loadOrReport(*path, stderr, lookup)
	if cfg == nil {
		return code
	}
	v, err := gateway.Migrate(ctx, cfg, gateway.NewLogger(cfg.Log, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "database at schema version %d\n", v)
	return exitOK
}

func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitConfig
}
