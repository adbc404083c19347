package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
)

// Describe writes what serve would run with c, read from path: one line per section,
// agent, connector, route and policy rule, and a warning per route or connector that
// can never take effect. Secrets are never written.
func (c *Config) Describe(w io.Writer, path string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("%s: ok", path)
	p("server:   listen %s, body limit %d bytes, shutdown grace %s", c.Server.Listen, int64(c.Server.BodyLimit), c.Server.ShutdownGrace)
	p("storage:  %s %s", c.Storage.Driver, c.Storage.RedactedDSN())
	var tokens []string
	for _, t := range c.Admin.Tokens {
		tokens = append(tokens, fmt.Sprintf("%s [%s]", t.Name, strings.Join(t.Scopes, ",")))
	}
	p("admin:    %d token(s) %s", len(tokens), strings.Join(tokens, ", "))
	key := "session key from console.session_key"
	if c.Console.SessionKey == "" {
		key = "random session key per process (sessions end at restart)"
	}
	p("console:  /console, sign-ins last %s, %s", c.Console.SessionTTL, key)
	p("agents:   %d", len(c.Agents))
	for _, a := range c.Agents {
		p("  - %s → %s (run lease %s)", a.ID, c.describeTarget(a), a.RunLease)
	}
	refs := c.connectorRefs()
	if len(refs) == 0 {
		p("connectors: none")
	} else {
		p("connectors:")
	}
	c.Connectors.each(func(k integration, l any) {
		for _, line := range k.describe(l) {
			p("  - %s", line)
		}
	})
	p("routes:   %d", len(c.Routes))
	for _, r := range c.Routes {
		p("  - %s: %s → %s / %s / %s", r.Name, matchJSON(r.Match), r.Thread.Agent, r.Thread.Resource, r.Thread.Thread)
	}
	pol := c.Policy
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
	for _, warn := range routeWarnings(c.Routes, refs) {
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
