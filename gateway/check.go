package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
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
	describe(stdout, *path, cfg)
	fmt.Fprintf(stdout, "tracing:  %s\n", tracing)
	warnPersist(stderr, *path, cfg.Policy.PersistUses())
	if !*connect {
		return exitOK
	}
	fmt.Fprintln(stdout, "connections:")
	log := slog.New(slog.DiscardHandler)
	hc := &http.Client{}
	if !runConnectChecks(ctx, stdout, connectChecks(cfg, hc, log), *timeout, cfg.Secrets()) {
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

func describe(w io.Writer, path string, cfg *Config) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("%s: ok", path)
	p("server:   listen %s, body limit %d bytes, shutdown grace %s", cfg.Server.Listen, int64(cfg.Server.BodyLimit), cfg.Server.ShutdownGrace)
	p("storage:  %s %s", cfg.Storage.Driver, cfg.Storage.RedactedDSN())
	var tokens []string
	for _, t := range cfg.Admin.Tokens {
		tokens = append(tokens, fmt.Sprintf("%s [%s]", t.Name, strings.Join(t.Scopes, ",")))
	}
	p("admin:    %d token(s) %s", len(tokens), strings.Join(tokens, ", "))
	key := "session key from console.session_key"
	if cfg.Console.SessionKey == "" {
		key = "random session key per process (sessions end at restart)"
	}
	p("console:  /console, sign-ins last %s, %s", cfg.Console.SessionTTL, key)
	p("agents:   %d", len(cfg.Agents))
	for _, a := range cfg.Agents {
		p("  - %s → %s (run lease %s)", a.ID, cfg.describeTarget(a), a.RunLease)
	}
	refs := cfg.connectorRefs()
	if len(refs) == 0 {
		p("connectors: none")
	} else {
		p("connectors:")
	}
	cfg.Connectors.each(func(k integration, l any) {
		for _, line := range k.describe(l) {
			p("  - %s", line)
		}
	})
	p("routes:   %d", len(cfg.Routes))
	for _, r := range cfg.Routes {
		p("  - %s: %s → %s / %s / %s", r.Name, matchJSON(r.Match), r.Thread.Agent, r.Thread.Resource, r.Thread.Thread)
	}
	pol := cfg.Policy
	p("policy:   summary interval %s, %d rule(s), %d source override(s), %d priority override(s), default %s",
		pol.SummaryInterval, len(pol.Rules), len(pol.Sources), len(pol.Priorities), defaultName(pol.Default != nil))
	for i, r := range pol.Rules {
		line := fmt.Sprintf("  - rule[%d] → %s %s", i, r.Action, when(r.After.String(), r.At))
		if r.Action == "" {
			line = fmt.Sprintf("  - rule[%d] → what the layers below decide", i)
		}
		if len(r.ActiveTimeIntervals) > 0 {
			line += ", only in " + strings.Join(r.ActiveTimeIntervals, "|")
		}
		if len(r.MuteTimeIntervals) > 0 {
			line += ", held in " + strings.Join(r.MuteTimeIntervals, "|")
		}
		p("%s", line)
	}
	srcs := make([]string, 0, len(pol.Sources))
	for s := range pol.Sources {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		p("  - source %s → %s", s, pol.Sources[s].Action)
	}
	for _, warn := range routeWarnings(cfg.Routes, refs) {
		p("warning:  %s", warn)
	}
}

// routeWarnings names what is configured but can never take effect: a route whose
// source or connector keys admit no configured connector, and a connector no route
// admits (its events are stored, then left unrouted). Neither is an error: connectors
// and routes are often added one at a time.
func routeWarnings(routes []connectors.RouteConfig, refs []admin.ConnectorRef) []string {
	var out []string
	for _, r := range routes {
		if !slices.ContainsFunc(refs, func(c admin.ConnectorRef) bool { return r.Match.Admits(c.Source, c.Name) }) {
			out = append(out, fmt.Sprintf("route %s matches %s, but no such connector is configured, so nothing reaches it",
				r.Name, describeAdmits(r.Match)))
		}
	}
	for _, c := range refs {
		if !slices.ContainsFunc(routes, func(r connectors.RouteConfig) bool { return r.Match.Admits(c.Source, c.Name) }) {
			out = append(out, fmt.Sprintf("connector %s/%s: no route matches its events; they are stored as unrouted", c.Source, c.Name))
		}
	}
	return out
}

// describeAdmits says which connectors a match admits, by its source and connector keys.
func describeAdmits(m connectors.RouteMatch) string {
	var parts []string
	if len(m.Source) > 0 {
		parts = append(parts, "source "+strings.Join(m.Source, ", "))
	}
	if len(m.Connector) > 0 {
		parts = append(parts, "connector "+strings.Join(m.Connector, ", "))
	}
	if len(parts) == 0 {
		return "any connector"
	}
	return strings.Join(parts, " and ")
}

// warnPersist says, in one line, that the policy's persist now means Mastra's persist:
// a config written when it wrote the notification to the thread likely wants log.
func warnPersist(w io.Writer, path string, uses []string) {
	if len(uses) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: warning: policy.%s: action persist keeps notifications in the inbox only, untold (as Mastra's persist); "+
		"use action log to write them to the thread without waking, as persist did before\n", path, strings.Join(uses, ", policy."))
}

func matchJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func defaultName(configured bool) string {
	if configured {
		return "configured"
	}
	return "the priority × presence table"
}

func when(after, at string) string {
	switch {
	case at != "":
		return "at " + at
	case after != "0s":
		return "after " + after
	}
	return "now"
}
