package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/gateway"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

const explainUsage = `Usage: gateway explain [flags] <event file | ->
       gateway explain [flags] --event <stored event id>

Explains, without writing anything, what an event would do if it arrived now: what the
connector makes of it, which routes match, the notification each creates, whether it
dedupes or coalesces into a pending record, and the policy's decision for the thread's
presence. It reads the configured database directly; no gateway needs to run. Without
a database, or on one without the current schema (never migrated, or migrations
pending), it explains against an empty inbox and says so; --migrate applies the
migrations first (creating the database). Connectors call no outside API (Slack name
lookups) unless --connect.

The event file is JSON: {"source", "connector", "headers", "body"} where body is the raw
body as a string or the JSON document itself (or "bodyBase64"); the output of
GET /admin/v1/events/{id} works as it is.

Example:
  echo '{"source":"github","connector":"acme","headers":{"X-GitHub-Event":"issue_comment"},"body":'"$(cat comment.json)"'}' \
    | gateway explain --config config.yaml -

Flags:
`

// explainCmd is the offline explain.
func explainCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("explain", explainUsage, stderr)
	path := configFlag(fs, lookup)
	eventID := fs.String("event", "", "explain a stored event by id instead of a file")
	asJSON := fs.Bool("json", false, "print the explanation as JSON")
	migrate := fs.Bool("migrate", false, "apply pending database migrations first (creates the database if need be)")
	connect := fs.Bool("connect", false, "let connectors call their APIs as they would serving (Slack names and channel types)")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	var sample admin.Sample
	switch {
	case *eventID != "" && fs.NArg() == 0:
		sample.EventID = *eventID
	case *eventID == "" && fs.NArg() == 1:
		raw, err := readInput(fs.Arg(0), stdin)
		if err != nil {
			fmt.Fprintf(stderr, "gateway explain: %v\n", err)
			return exitConfig
		}
		if err := json.Unmarshal(raw, &sample); err != nil {
			fmt.Fprintf(stderr, "gateway explain: %s: not a JSON event: %v\n", fs.Arg(0), err)
			return exitConfig
		}
	default:
		fs.Usage()
		return exitConfig
	}
	cfg, code := loadOrReport(*path, stderr, lookup)
	if cfg == nil {
		return code
	}
	log := gateway.NewLogger(cfg.Log, stderr)
	st, err := gateway.OpenExplainStore(ctx, cfg, *migrate, log)
	if err != nil {
		fmt.Fprintf(stderr, "gateway explain: %v\n", err)
		return exitFail
	}
	defer st.Close()
	switch {
	case !st.Found():
		fmt.Fprintf(stderr, "gateway explain: no database at %s (the gateway has not run, or --config names another): explaining against an empty inbox\n",
			cfg.Storage.RedactedDSN())
	case !st.Current():
		fmt.Fprintln(stderr, "gateway explain: the database is not migrated (run `gateway migrate`, or pass --migrate): explaining against an empty inbox")
	}
	if !*connect && cfg.HasLookups() {
		fmt.Fprintln(stderr, "gateway explain: Slack names and channel types are not looked up (--connect does, as serving would)")
	}
	x, err := gateway.NewExplainer(ctx, cfg, st, !*connect, log)
	if err != nil {
		fmt.Fprintf(stderr, "gateway explain: %v\n", err)
		return exitConfig
	}
	out, err := x.Explain(ctx, sample)
	if err != nil {
		var se *server.Error
		if errors.As(err, &se) {
			fmt.Fprintf(stderr, "gateway explain: %s\n", se.Message)
			return exitConfig
		}
		fmt.Fprintf(stderr, "gateway explain: %v\n", err)
		return exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitFail
		}
		return exitOK
	}
	printExplanation(stdout, out)
	return exitOK
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// printExplanation writes x for a terminal.
func printExplanation(w io.Writer, x *admin.Explanation) {
	// The label column is as wide as its longest label (route names are the config's),
	// and always followed by a space, so no label runs into its text.
	width := 14
	for _, r := range x.Routes {
		width = max(width, len("  "+r.Route)+2)
	}
	p := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-*s"+format+"\n", append([]any{width, label}, args...)...)
	}
	ev := x.Event
	what := ev.Source + "/" + ev.Connector
	if ev.Type != "" {
		what += " " + ev.Type
	}
	if ev.ID != "" {
		what += " (stored event " + ev.ID + ")"
	}
	if ev.DeliveryID != "" {
		what += " delivery " + ev.DeliveryID
	}
	p("event:", "%s", what)
	p("at:", "%s", x.At.Format(time.RFC3339))
	p("status:", "%s", describeStatus(x.Status, x.Reason))
	if x.DuplicateOf != "" {
		p("note:", "event %s has this delivery id: delivered for real, this would be acknowledged as a redelivery and change nothing", x.DuplicateOf)
	}
	for i, it := range x.Items {
		p(fmt.Sprintf("item %d:", i), "%s, %s: %q", it.Kind, it.Priority, it.Summary)
		p("", "fields: %s", describeFields(it.Fields))
		if it.Skip != "" {
			p("", "skipped: %s", it.Skip)
		}
	}
	if len(x.Routes) > 0 {
		fmt.Fprintln(w, "routes:")
	} else if x.RoutesNote != "" {
		p("routes:", "none tried: %s", x.RoutesNote)
	}
	for _, r := range x.Routes {
		name := "  " + r.Route
		via := ""
		if r.Watch != "" {
			via = " (watch " + r.Watch + ")"
		}
		switch {
		case r.Unwatched:
			p(name, "no match: watched, and no live watch of %s hears it", r.Thread)
		case r.Matched && r.Error == "" && r.SameThreadAs != "":
			p(name, "matches %s%s, already fed by route %s", r.Thread, via, r.SameThreadAs)
		case r.Matched && r.Error == "" && via != "":
			p(name, "matches%s → %s", via, r.Thread)
		case !r.Matched && r.When != "" && r.Error != "":
			p(name, "no match: %s", r.Error)
		case !r.Matched && r.When != "":
			p(name, "no match: when %s is false", r.When)
		case !r.Matched:
			p(name, "no match")
		case r.Error != "":
			p(name, "matches, but %s", r.Error)
		case r.SameThreadAs != "":
			p(name, "matches %s, already fed by route %s", r.Thread, r.SameThreadAs)
		case r.When != "":
			p(name, "matches (when %s) → %s", r.When, r.Thread)
		default:
			p(name, "matches → %s", r.Thread)
		}
	}
	if len(x.Notifications) == 0 {
		p("notification:", "none would be made")
	}
	for _, o := range x.Notifications {
		p("notification:", "%s (route %s)", o.Thread, o.Route)
		if e := o.Notification.EndsWatch; e != nil {
			p("  ends:", "watch %s (%s)", e.ID, e.Reason)
		}
		presence := string(o.Presence)
		if run := o.ActiveRun; run != nil {
			presence += fmt.Sprintf(" (run %s since %s, lease until %s)", run.RunID, run.Since.Format(time.RFC3339), run.LeaseUntil.Format(time.RFC3339))
		}
		p("  presence:", "%s", presence)
		if nd := o.Net; nd != nil {
			told := "nothing told yet"
			if nd.HasTold {
				told = "last told " + nd.Told
			}
			p("  net state:", "lane %s, state %q (rest %q, %s): %s", nd.NetKey, nd.State, nd.RestState, told, nd.Reason)
		}
		switch m := o.Merge; {
		case o.Net != nil && o.Net.Unchanged:
			p("  inbox:", "creates a superseded record that reaches nothing%s", supersedes(o.Net))
		case o.Net != nil:
			p("  inbox:", "creates a new %s record%s", o.Record.Priority, supersedes(o.Net))
		case m != nil:
			target := "pending record " + m.RecordID
			if m.RecordID == "" {
				target = "the record an earlier notification of this event creates"
			}
			p("  inbox:", "merges into %s (same %s), coalescedCount %d → %d", target, m.On, m.Record.CoalescedCount, o.Record.CoalescedCount)
		default:
			p("  inbox:", "creates a new %s record", o.Record.Priority)
		}
		p("  decision:", "%s — %s", o.Decision.Action, o.Decision.Reason)
		if o.Wake != nil {
			p("  wake:", "%s", o.Wake.Note)
		}
	}
}

// supersedes says which pending records of the lane a new record would end.
func supersedes(nd *inbox.NetDecision) string {
	if len(nd.Supersedes) == 0 {
		return ""
	}
	return fmt.Sprintf(", superseding pending %s (coalescedCount %d)", strings.Join(nd.Supersedes, ", "), nd.CoalescedCount)
}

func describeStatus(st inbox.EventStatus, reason string) string {
	if reason == "" {
		return string(st)
	}
	return string(st) + " (" + reason + ")"
}

func describeFields(fields map[string]any) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		switch v := fields[k].(type) {
		case map[string]string:
			sub := make([]string, 0, len(v))
			for sk, sv := range v {
				sub = append(sub, k+"."+sk+"="+sv)
			}
			slices.Sort(sub)
			parts = append(parts, sub...)
		case []string:
			parts = append(parts, k+"="+strings.Join(v, ","))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, " ")
}
