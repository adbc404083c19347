package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/signalgate/signalgate/admin"
)

const replayUsage = `Usage: gateway replay [flags] <event id>...
       gateway replay [flags] --status unrouted --since 2026-11-01T00:00:00Z [--all]

Replays stored events through today's routes and policy, through the admin API (a token
with the write scope). Each replay is stored as a new event that names the original
(replayOf); the provider's delivery id does not turn it away. With filters instead of
ids, the events GET /admin/v1/events lists for them are replayed, a page at a time.

Example:
  export SIGNALGATE_ADMIN_TOKEN=…
  gateway replay --url http://127.0.0.1:8080 0193a2f4-5b6c-7d8e-9f00-112233445566
  gateway replay --source github --status unrouted --since 2026-11-01T00:00:00Z --all

Flags:
`

func replayCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("replay", replayUsage, stderr)
	c := clientFlags(fs, lookup, envAdminToken)
	filters := map[string]*string{}
	for _, f := range []struct{ name, help string }{
		{"source", "only events of this source (github, slack, email, generic)"},
		{"connector", "only events of this connector"},
		{"type", "only events of this type"},
		{"status", "only events with this status (routed, unrouted, ignored, invalid)"},
		{"since", "only events received at or after (RFC 3339)"},
		{"until", "only events received before (RFC 3339)"},
	} {
		filters[f.name] = fs.String(f.name, "", f.help)
	}
	limit := fs.Int("limit", 0, "events per page (1 to 500; default 50)")
	all := fs.Bool("all", false, "follow the pages until every matching event is replayed")
	replays := fs.Bool("replays", false, "also replay events that are replays themselves")
	asJSON := fs.Bool("json", false, "print the results as JSON lines")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if err := c.check(); err != nil {
		fmt.Fprintf(stderr, "gateway replay: %v\n", err)
		return exitConfig
	}
	q := url.Values{}
	for name, v := range filters {
		if *v != "" {
			q.Set(name, *v)
		}
	}
	if *limit != 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	if *replays {
		q.Set("replays", "true")
	}
	switch {
	case fs.NArg() > 0 && len(q) > 0:
		fmt.Fprintln(stderr, "gateway replay: give event ids or filters, not both")
		return exitConfig
	case fs.NArg() == 0 && len(q) == 0:
		fs.Usage()
		return exitConfig
	}
	show := func(r admin.ReplayResult) {
		if *asJSON {
			_ = json.NewEncoder(stdout).Encode(r)
			return
		}
		line := fmt.Sprintf("%s → %s  %s  %d record(s)", r.ReplayOf, r.EventID, r.Status, len(r.Records))
		if r.Error != "" {
			line += "  (" + r.Error + ")"
		}
		fmt.Fprintln(stdout, line)
	}
	var n int
	for _, id := range fs.Args() {
		var r admin.ReplayResult
		if err := c.do(ctx, http.MethodPost, admin.Prefix+"/events/"+url.PathEscape(id)+"/replay", nil, &r); err != nil {
			fmt.Fprintf(stderr, "gateway replay: %s: %v\n", id, err)
			return exitFail
		}
		show(r)
		n++
	}
	skipped := 0
	for len(q) > 0 {
		var page struct {
			Replayed   []admin.ReplayResult `json:"replayed"`
			Skipped    int                  `json:"skipped"`
			NextCursor string               `json:"nextCursor"`
		}
		if err := c.do(ctx, http.MethodPost, admin.Prefix+"/events/replay?"+q.Encode(), nil, &page); err != nil {
			fmt.Fprintf(stderr, "gateway replay: %v\n", err)
			return exitFail
		}
		for _, r := range page.Replayed {
			show(r)
		}
		n, skipped = n+len(page.Replayed), skipped+page.Skipped
		if page.NextCursor == "" {
			break
		}
		if !*all {
			fmt.Fprintf(stderr, "more events match: run again with --all to replay them too\n")
			break
		}
		q.Set("cursor", page.NextCursor)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "replayed %d event(s)", n)
		if skipped > 0 {
			fmt.Fprintf(stdout, ", skipped %d replay(s) (--replays includes them)", skipped)
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}
