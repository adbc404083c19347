package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/gateway"
)

// printRefusals writes, for each HTTP connector of the gateway running at base, why it
// refused deliveries lately (its admin API's connector list), one line per refusal.
// A gateway that does not answer is a line saying so, not a failed check: `check
// --connect` runs before the gateway starts too.
func printRefusals(ctx context.Context, w io.Writer, cfg *gateway.Config, base, token string, timeout time.Duration) {
	if base == "" {
		fmt.Fprintf(w, "refusals: not read: server.listen %q names no port to ask: pass --url\n", cfg.Server.Listen)
		return
	}
	if token == "" {
		token = readToken(cfg)
	}
	if token == "" {
		fmt.Fprintf(w, "refusals: not read: no admin token with scope read: configure admin.tokens or set %s\n", envAdminToken)
		return
	}
	c := &client{base: base, token: token, http: &http.Client{Timeout: timeout}}
	var list struct {
		Connectors []admin.ConnectorHealth `json:"connectors"`
	}
	err := c.do(ctx, http.MethodGet, "/admin/v1/connectors", nil, &list)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		fmt.Fprintf(w, "refusals: not read: the gateway at %s refused the admin token (HTTP %d): set %s to a token with scope read\n", base, ae.Status, envAdminToken)
		return
	case err != nil:
		fmt.Fprintf(w, "refusals: not read: no gateway answers at %s (start it with `gateway serve`, or pass --url)\n", base)
		return
	}
	fmt.Fprintf(w, "refusals (the gateway at %s; kept in its memory since it started):\n", base)
	listed := false
	for _, h := range list.Connectors {
		if h.Refusals == nil {
			continue // no HTTP deliveries: nothing to refuse
		}
		listed = true
		writeRefusals(w, connectors.RefusalKey(h.Source, h.Name), *h.Refusals)
	}
	if !listed {
		fmt.Fprintln(w, "  no connector takes HTTP deliveries")
	}
	for _, h := range list.Connectors {
		if h.Backfill != nil {
			writeBackfill(w, connectors.RefusalKey(h.Source, h.Name), *h.Backfill)
		}
	}
}

// writeBackfill writes a connector's last backfill pass: when, how far behind, what it
// found.
func writeBackfill(w io.Writer, name string, p connectors.BackfillPass) {
	fmt.Fprintf(w, "backfill %s: last pass %s, lag %s: %d ingested, %d duplicate, %d ignored, %d requests",
		name, p.At.UTC().Format(time.RFC3339), p.Lag().Round(time.Second), p.Ingested, p.Duplicate, p.Ignored, p.Requests)
	if p.Busy > 0 {
		fmt.Fprintf(w, ", %d read by another replica", p.Busy)
	}
	if p.RateLimitedUntil != nil {
		fmt.Fprintf(w, ", rate limited until %s", p.RateLimitedUntil.UTC().Format(time.RFC3339))
	}
	if p.Error != "" {
		fmt.Fprintf(w, "; failed: %s", p.Error)
	}
	fmt.Fprintln(w)
}

// writeRefusals writes one connector's refusals, newest first.
func writeRefusals(w io.Writer, name string, log connectors.RefusalLog) {
	since := log.Since.UTC().Format(time.RFC3339)
	if log.Total == 0 {
		fmt.Fprintf(w, "  %s: none since %s\n", name, since)
		return
	}
	fmt.Fprintf(w, "  %s: %d since %s; the last %d, newest first:\n", name, log.Total, since, len(log.Recent))
	for _, f := range log.Recent {
		fmt.Fprintf(w, "    %s  %s  HTTP %d  %s\n", f.At.UTC().Format(time.RFC3339), f.RemoteAddr, f.Status, f.Reason)
	}
}

// readToken is the first admin token of cfg that may read, "" when none.
func readToken(cfg *gateway.Config) string {
	for _, t := range cfg.Admin.Tokens {
		if t.Has(admin.ScopeRead) {
			return t.Token.Reveal()
		}
	}
	return ""
}

// localURL is the URL a gateway serving on listen answers at from this machine; ""
// when listen names no fixed port.
func localURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
