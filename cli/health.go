package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const healthUsage = `Usage: gateway health [flags]

Asks a running gateway whether it is ready (GET /readyz: the database is reachable and
migrated) and exits 0 if it is, 1 if not: the image's HEALTHCHECK and the compose file's
healthcheck run it, as the image has no shell nor curl. --live asks only whether the
process answers (GET /healthz). No token is needed.

The address is --url, else $SIGNALGATE_URL, else the one $SIGNALGATE_LISTEN serves on
(0.0.0.0 asked on 127.0.0.1), else http://127.0.0.1:8080.

Example:
  gateway health --url http://127.0.0.1:8080

Flags:
`

func healthCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("health", healthUsage, stderr)
	base := fs.String("url", healthURL(lookup), "gateway base URL")
	live := fs.Bool("live", false, "only whether the process answers (GET /healthz), not whether it is ready")
	timeout := fs.Duration("timeout", 5*time.Second, "time allowed for the answer")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 || *timeout <= 0 {
		fs.Usage()
		return exitConfig
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "gateway health: --url: want http(s)://host:port, got %q\n", *base)
		return exitConfig
	}
	path := "/readyz"
	if *live {
		path = "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(*base, "/")+path, nil)
	if err != nil {
		fmt.Fprintf(stderr, "gateway health: %v\n", err)
		return exitConfig
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "gateway health: %v\n", err)
		return exitFail
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "gateway health: GET %s: %s (the cause is in the gateway's log)\n", path, resp.Status)
		return exitFail
	}
	fmt.Fprintf(stdout, "GET %s: %s\n", path, resp.Status)
	return exitOK
}

// healthURL is where health asks by default: $SIGNALGATE_URL, else the address
// $SIGNALGATE_LISTEN serves on (all interfaces asked on loopback), else the default.
func healthURL(lookup func(string) (string, bool)) string {
	if v, ok := lookup(envURL); ok && v != "" {
		return v
	}
	if v, ok := lookup("SIGNALGATE_LISTEN"); ok && v != "" {
		if host, port, err := net.SplitHostPort(v); err == nil && port != "" {
			if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
				host = "127.0.0.1"
			}
			return "http://" + net.JoinHostPort(host, port)
		}
	}
	return defaultURL
}
