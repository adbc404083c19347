package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/signalgate/signalgate/telemetry"
)

// checkCmd validates a config and prints what serve would run. Secrets are never printed.
// With --connect it then tries every outside dependency, one line each.
func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("check", checkUsage, stderr)
	path := configFlag(fs, lookup)
	connect := fs.Bool("connect", false, "also try every outside dependency: database, IMAP, Slack, Mastra and webhook targets")
	timeout := fs.Duration("timeout", 10*time.Second, "time allowed for each --connect check")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 || *timeout <= 0 {
		fs.Usage()
		return exitConfig
	}
	cfg, code := loadOrReport(*path, stderr, lookup)
	if cfg == nil {
		return code
	}
	// What the OTEL_* variables add to the telemetry block is only known here.
	tracing, err := telemetry.Describe(cfg.Telemetry, lookup)
	if err != nil {
		fmt.Fprintf(stderr, "%s: telemetry: %v\n", *path, err)
		return exitConfig
	}
	cfg.Describe(stdout, *path)
	fmt.Fprintf(stdout, "tracing:  %s\n", tracing)
	warnPersist(stderr, *path, cfg.Policy.PersistUses())
	if !*connect {
		return exitOK
	}
	fmt.Fprintln(stdout, "connections:")
	if !cfg.CheckConnections(ctx, stdout, *timeout) {
		return exitFail
	}
	return exitOK
}

const checkUsage = `Usage: gateway check [flags]

Validates the config and prints what serve would run (never secrets). With --connect it
then tries every outside dependency and prints one line each: the database (reachable
and migrated), each IMAP login and mailbox UIDVALIDITY, each Slack bot token (auth.test)
and Socket Mode app token (apps.connections.open), each Mastra target's agent
(GET /api/agents/{id}) and each webhook target (HEAD, else OPTIONS; nothing is
delivered). It exits 0 only if every check passes; a failing line says what to fix.

Example:
  gateway check --config config.yaml --connect

Flags:
`

// warnPersist says, in one line, that the policy's persist now means Mastra's persist:
// a config written when it wrote the notification to the thread likely wants log.
func warnPersist(w io.Writer, path string, uses []string) {
	if len(uses) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: warning: policy.%s: action persist keeps notifications in the inbox only, untold (as Mastra's persist); "+
		"use action log to write them to the thread without waking, as persist did before\n", path, strings.Join(uses, ", policy."))
}
