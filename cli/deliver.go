package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

const deliverUsage = `Usage: gateway deliver --connector NAME [--event NAME [--action ACTION]] [flags]

Signs and posts a sample event to a running gateway through a configured connector,
exactly as its sender would: the connector's secret from the config, the sender's
headers (delivery id, event name, timestamp, signature, User-Agent), a fresh delivery
id. Then prints the gateway's answer and what it did with the event: its status, the
records it made, their routes and the policy's decision (read from the admin API).

Samples: GitHub events are @octokit/webhooks-examples' (--event check_run --action
completed); Slack sends a DM or a mention of the bot (--event dm, --event mention); a
generic connector sends its preset's documented sample (--list shows each connector's).
--set changes the sample before it is signed; --body sends a file of your own instead.

The connector's kind and secret come from --config; the gateway is reached at --url
(default: $SIGNALGATE_URL, else the config's server.listen on this machine). What the
gateway did is read with $SIGNALGATE_ADMIN_TOKEN, else the config's first admin token
with the read scope.

Example:
  gateway deliver --connector acme --event check_run --action completed --set check_run.conclusion=failure
  gateway deliver --connector acme --event mention
  gateway deliver --connector billing --set data.foo=baz --dry-run
  gateway deliver --connector acme --list

Flags:
`

// setFlags collects repeated --set path=value.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// deliverOpts are the parsed flags of deliver.
type deliverOpts struct {
	connector, event, action, body, signingKey string
	sets                                       setFlags
	list, dryRun                               bool
	c                                          *client
}

func deliverCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("deliver", deliverUsage, stderr)
	path := configFlag(fs, lookup)
	var o deliverOpts
	o.c = clientFlags(fs, lookup, envAdminToken)
	if v, ok := lookup(envURL); !ok || v == "" {
		o.c.base = "" // the config's listen address, once read
	}
	fs.StringVar(&o.connector, "connector", "", "the connector to deliver through: its name (or source/name)")
	fs.StringVar(&o.event, "event", "", "the sample: a GitHub event (check_run), a Slack dm or mention, a preset's sample (--list)")
	fs.StringVar(&o.action, "action", "", "the GitHub event's action (completed)")
	fs.Var(&o.sets, "set", "change the sample before signing: path=value, a JSON value or else a string (repeatable)")
	fs.StringVar(&o.body, "body", "", "send this file's bytes as the body instead of the sample (- for stdin)")
	fs.StringVar(&o.signingKey, "signing-key", "", "Ed25519 private key (hex) for a connector that holds only a public key (from $"+envSigningKey+" when not given)")
	fs.BoolVar(&o.list, "list", false, "list the connector's samples and exit")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the signed request instead of posting it")
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "gateway deliver: "+format+"\n", args...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(exitConfig, "unexpected argument %q", fs.Arg(0))
	}
	if o.connector == "" {
		return fail(exitConfig, "--connector: required (the name of a configured connector)")
	}
	if o.action != "" && o.event == "" {
		return fail(exitConfig, "--action: needs --event (the event the action is of)")
	}
	if o.signingKey == "" {
		o.signingKey, _ = lookup(envSigningKey)
	}
	cfg, code := loadOrReport(*path, stderr, lookup)
	if cfg == nil {
		return code
	}
	source, snd, err := cfg.ConnectorSender(o.connector, connectors.SenderOptions{SigningKey: o.signingKey})
	if err != nil {
		return fail(exitConfig, "%v", err)
	}
	name := strings.TrimPrefix(o.connector, source+"/")
	if o.list {
		for _, s := range snd.Samples() {
			fmt.Fprintf(stdout, "%-34s %s\n", s.Name, s.About)
		}
		return exitOK
	}
	now := time.Now()
	sampleName := o.event
	if o.action != "" {
		sampleName += "." + o.action
	}
	sample, err := snd.Sample(sampleName, now)
	if err != nil {
		return fail(exitConfig, "--event: %v (gateway deliver --connector %s --list shows the samples)", err, o.connector)
	}
	if o.body != "" {
		if sample.Body, err = readInput(o.body, os.Stdin); err != nil {
			return fail(exitConfig, "--body: %v", err)
		}
	}
	for _, s := range o.sets {
		if sample.Body, err = setField(sample, s); err != nil {
			return fail(exitConfig, "--set %s: %v", s, err)
		}
	}
	if o.c.base == "" {
		o.c.base = cfg.LocalURL()
	}
	if _, err := url.Parse(o.c.base); err != nil || !strings.HasPrefix(o.c.base, "http") {
		return fail(exitConfig, "--url: want http(s)://host:port, got %q", o.c.base)
	}
	target := ingestURL(o.c.base, source, name)
	hdr, err := snd.Sign(sample, target, now)
	if err != nil {
		return fail(exitConfig, "sign: %v", err)
	}
	if o.dryRun {
		printRequest(stdout, target, hdr, sample.Body)
		return exitOK
	}
	what := sample.Name
	if o.body != "" {
		what = o.body
	}
	fmt.Fprintf(stdout, "POST %s  %s (delivery %s)\n", target, what, sample.DeliveryID)
	status, answer, err := post(ctx, target, hdr, sample.Body)
	if err != nil {
		return fail(exitFail, "%v: is the gateway running at %s? (--url, or the config's server.listen)", err, o.c.base)
	}
	fmt.Fprintf(stdout, "answer:  %d %s %s\n", status, http.StatusText(status), oneLine(answer))
	if o.c.token == "" {
		o.c.token, _ = lookup(envAdminToken)
	}
	if o.c.token == "" {
		o.c.token = cfg.ReadToken()
	}
	if status/100 != 2 {
		// The answer carries no reason (rightly: a stranger learns nothing); the
		// connector's refusal log, read with an admin token, does.
		if r, ok := lastRefusal(ctx, o.c, source, name, status); ok {
			fmt.Fprintf(stdout, "reason:  %s (the connector's refusal log)\n", r.Reason)
		}
		return fail(exitFail, "%s", refusal(status, answer, source, name))
	}
	var out connectors.Outcome
	_ = json.Unmarshal(answer, &out)
	if o.c.token == "" {
		fmt.Fprintf(stdout, "what the gateway did is in the admin API: set %s to an admin token with the read scope to see it here", envAdminToken)
		if out.EventID != "" {
			fmt.Fprintf(stdout, ", or run gateway explain --event %s", out.EventID)
		}
		fmt.Fprintln(stdout)
		return exitOK
	}
	if err := showEvent(ctx, stdout, o.c, source, name, sample.DeliveryID, out); err != nil {
		fmt.Fprintf(stdout, "what the gateway did: not read (%v); the console shows it under Events\n", err)
	}
	return exitOK
}

// envSigningKey holds deliver's Ed25519 signing key, so it stays off command lines.
const envSigningKey = "SIGNALGATE_SIGNING_KEY"

// setField applies one --set path=value to the sample's body: a JSON body by path
// (a.b.0.c; the value JSON when it parses, else a string), a form by field name.
func setField(s connectors.Sample, kv string) ([]byte, error) {
	path, value, ok := strings.Cut(kv, "=")
	if !ok || path == "" {
		return nil, errors.New("want path=value, like check_run.conclusion=failure")
	}
	if strings.HasPrefix(s.ContentType, "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(s.Body))
		if err != nil {
			return nil, fmt.Errorf("the body is not a form: %w", err)
		}
		if !form.Has(path) {
			return nil, fmt.Errorf("%s: no such field in the form (it has %s)", path, strings.Join(slices.Sorted(maps.Keys(form)), ", "))
		}
		form.Set(path, value)
		return []byte(form.Encode()), nil
	}
	raw := []byte(value)
	if !json.Valid(raw) {
		raw, _ = json.Marshal(value)
	}
	return connectors.SetJSON(s.Body, path, raw)
}

// post sends the signed delivery and returns the answer.
func post(ctx context.Context, target string, hdr http.Header, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, err
}

// lastRefusal is the newest refusal of the connector with the given status, as its
// refusal log in the admin API keeps it; false without a token or an answer.
func lastRefusal(ctx context.Context, c *client, source, name string, status int) (connectors.Refusal, bool) {
	if c.token == "" {
		return connectors.Refusal{}, false
	}
	var log connectors.RefusalLog
	path := admin.Prefix + "/connectors/" + url.PathEscape(source) + "/" + url.PathEscape(name) + "/refusals"
	if err := c.do(ctx, http.MethodGet, path, nil, &log); err != nil || len(log.Recent) == 0 || log.Recent[0].Status != status {
		return connectors.Refusal{}, false
	}
	return log.Recent[0], true
}

// refusal says why the gateway did not take the delivery and what to check.
func refusal(status int, answer []byte, source, name string) string {
	switch status {
	case http.StatusUnauthorized:
		return "the gateway refused the signature: is the secret in config the one deliver used? " +
			"(the gateway and deliver must read the same config and environment; a gateway started before the secret changed still has the old one)"
	case http.StatusNotFound:
		return fmt.Sprintf("the gateway has no %s connector %q: is it running this config? (after adding a connector, reload or restart it)", source, name)
	case http.StatusRequestEntityTooLarge:
		return "the body is over the gateway's server.body_limit"
	}
	return readAPIError(status, answer).Error()
}

// showEvent prints what the gateway did with the delivery, from the admin API.
func showEvent(ctx context.Context, w io.Writer, c *client, source, name, deliveryID string, out connectors.Outcome) error {
	id := out.EventID
	if id == "" { // a sender answered in its own format (Twilio's TwiML, Discord's deferral)
		var page admin.EventPage
		q := url.Values{"source": {source}, "connector": {name}, "limit": {"50"}}
		if err := c.do(ctx, http.MethodGet, admin.Prefix+"/events?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		i := slices.IndexFunc(page.Events, func(e inbox.Event) bool { return e.DeliveryID == deliveryID })
		if i < 0 {
			return fmt.Errorf("no stored event of %s/%s has delivery id %s", source, name, deliveryID)
		}
		id = page.Events[i].ID
	}
	var ev admin.EventDetail
	if err := c.do(ctx, http.MethodGet, admin.Prefix+"/events/"+url.PathEscape(id), nil, &ev); err != nil {
		return err
	}
	if out.Duplicate {
		fmt.Fprintf(w, "event:   %s was already stored (a redelivery): acknowledged, nothing changed\n", id)
		fmt.Fprintln(w, "         a sender that signs no timestamp is known by its body too: change the sample with --set to send a new event")
		return nil
	}
	fmt.Fprintf(w, "event:   %s %s %s\n", id, ev.Type, describeStatus(ev.Status, ev.Error))
	for _, r := range ev.CreatedRecords {
		th := r.Thread
		fmt.Fprintf(w, "record:  %s on %s/%s/%s (route %s): %s, %s: %q\n", r.ID, th.Agent, th.Resource, th.Thread, r.Route, r.Kind, r.Priority, r.Summary)
		fmt.Fprintf(w, "         decision: %s — %s\n", r.Action, r.Reason)
	}
	if merged := ev.Records - len(ev.CreatedRecords); merged > 0 {
		fmt.Fprintf(w, "merged:  into %d pending record(s) of the same dedupe or coalesce key\n", merged)
	}
	fmt.Fprintf(w, "why:     gateway explain --event %s (each route's verdict); the console shows the event too\n", id)
	return nil
}

// printRequest writes the signed request as it would be sent.
func printRequest(w io.Writer, target string, hdr http.Header, body []byte) {
	fmt.Fprintf(w, "POST %s\n", target)
	for _, k := range slices.Sorted(maps.Keys(hdr)) {
		fmt.Fprintf(w, "%s: %s\n", k, hdr.Get(k))
	}
	fmt.Fprintf(w, "\n%s\n", body)
}

// oneLine is an answer body on one line, shortened.
func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	return connectors.Truncate(s, 300)
}
