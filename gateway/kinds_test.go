package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// fakeConfig is a new integration kind's config entry, as a connector package writes it.
type fakeConfig struct {
	Name   string        `yaml:"name"`
	Token  secret.Secret `yaml:"token"`
	Region string        `yaml:"region"`
}

func (c fakeConfig) ConnectorName() string { return c.Name }

func (c fakeConfig) Validate() error {
	if c.Token == "" {
		return errors.New("token: required")
	}
	return nil
}

func (c fakeConfig) WithDefaults() fakeConfig {
	if c.Region == "" {
		c.Region = "eu"
	}
	return c
}

// fakeVerifiedBy is the provenance the fake kind's connectors stamp on what they verified.
const fakeVerifiedBy = "fake-signature"

// fakeParser is its parse step; serve builds it with the pipeline it ingests into. An
// event's body names the room it happened in ({"room": "r-1"}): its item belongs to that
// room (its watch resource) and an answer goes there (its replyTo).
type fakeParser struct{ pipeline *connectors.Pipeline }

func (fakeParser) Items(_ context.Context, ev *inbox.Event) ([]connectors.Item, error) {
	var body struct {
		Room string `json:"room"`
	}
	_ = json.Unmarshal(ev.Body, &body)
	it := connectors.Item{Kind: ev.Type, Priority: inbox.PriorityHigh, Summary: "A fake " + ev.Type,
		Fields: connectors.Fields{Source: "fake", Connector: "acme", Kind: ev.Type}}
	if body.Room != "" {
		it.WatchResources = []string{body.Room}
		it.Metadata = map[string]any{connectors.MetaVerifiedBy: fakeVerifiedBy,
			reply.MetadataKey: reply.NewTo("fake", "acme", fakePlace{Room: strings.ToUpper(body.Room), Message: ev.DeliveryID})}
	}
	return []connectors.Item{it}, nil
}

// fakePlace is where the fake kind answers: a room, and the message answered (which is
// the thread's, never the agent's).
type fakePlace struct {
	Room    string `json:"room,omitempty" doc:"Fake room."`
	Message string `json:"message,omitempty"`
}

func (p fakePlace) Key() string                   { return p.Room }
func (p fakePlace) Describe() string              { return "room " + p.Room }
func (p fakePlace) WatchResource() (string, bool) { return p.Room, p.Room != "" }

// fakeWatchResource reads a room as a watch names it: "R-" and digits, upper-cased.
func fakeWatchResource(r string) (watch.Resource, error) {
	r = strings.ToUpper(r)
	if !strings.HasPrefix(r, "R-") {
		return watch.Resource{}, errors.New("want a room (r-1)")
	}
	return watch.Resource{Canonical: r}, nil
}

// fakeSender posts the fake kind's answers: each reaches sent.
type fakeSender struct{ sent chan reply.Reply }

func (fakeSender) Check(to reply.To, _ string) error {
	if p, err := reply.PlaceOf[fakePlace](to); err != nil || p.Room == "" {
		return fmt.Errorf("%w: no room", reply.ErrUnknownPlace)
	}
	return nil
}

func (fakeSender) Find(context.Context, reply.Reply) (reply.Sent, bool, error) {
	return reply.Sent{}, false, nil
}

func (s fakeSender) Send(_ context.Context, r reply.Reply) (reply.Sent, bool, error) {
	s.sent <- r
	return reply.Sent{PlatformID: r.ID}, false, nil
}

// fakeKinds is the builtin table plus one row for the fake kind; built receives the
// parse step the gateway builds for it, and its answers go to sender.
func fakeKinds(built *fakeParser, sender fakeSender) []integration {
	return append(builtinKinds(), Kind[fakeConfig]{
		Source:   "fake",
		Describe: func(c fakeConfig) string { return "region " + c.Region },
		Parser: func(_ []fakeConfig, b build) (admin.Parser, error) {
			*built = fakeParser{pipeline: b.pipeline}
			return built, nil
		},
		Connect: func(c fakeConfig, key string, _ *http.Client) []connectCheck {
			return []connectCheck{{"fake/" + c.Name, func(context.Context) (string, error) {
				// A careless client library that puts the credential in its error.
				return "", errors.New("login refused for token " + c.Token.Reveal() + ": check " + key + ".token")
			}}}
		},
		// It answers and is watched.
		Place:      reply.Codec[fakePlace]{},
		Replier:    func([]fakeConfig, build) (reply.Sender, error) { return sender, nil },
		VerifiedBy: []string{fakeVerifiedBy},
		Watch:      fakeWatchResource,
		WatchAdmit: func([]fakeConfig, build) watch.Admit {
			return func(_ context.Context, _ string, r watch.Resource) error {
				if r.Canonical == "R-SECRET" {
					return fmt.Errorf("%w: resource: room %s is closed", watch.ErrUnknown, r.Canonical)
				}
				return nil
			}
		},
	})
}

// TestNewKindIsOneRow adds an integration kind with one row of the table and sees it
// validated (unknown keys, its own rules, defaults), redacted in check, labelled in
// metrics, a known route source, explained and routed to a thread; and, two-way, its
// places answered through its sender and named in the API documents, its resources
// watched (canonical, within its own rule) and in the documents' and MCP's enums.
func TestNewKindIsOneRow(t *testing.T) {
	var built fakeParser
	sender := fakeSender{sent: make(chan reply.Reply, 4)}
	kinds := fakeKinds(&built, sender)

	// Validated: unknown keys inside the kind's entries and its own rules, by key path;
	// a kind nobody registered is an unknown key.
	_, err := parseConfig("t.yaml", []byte(`
agents: [ { id: coder, token: dev-only-coder-token } ]
connectors:
  fake: [ { name: acme, colour: blue } ]
  fakes: []
`), noEnv, kinds)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.ElementsMatch(t, []string{
		"connectors.fake[0].colour: unknown key (line 4)",
		"connectors.fakes: unknown key (line 5)",
		"connectors.fake[0].token: required",
	}, ce.Problems)
	_, err = parseConfig("t.yaml", []byte(`
agents: [ { id: coder, token: dev-only-coder-token } ]
routes: [ { name: r, match: { source: fakee }, thread: { agent: coder, resource: r, thread: t } } ]
`), noEnv, kinds)
	require.ErrorContains(t, err, `routes[0].match.source[0]: unknown source "fakee" (want `+strings.Join(sourcesWith(nil, "fake"), ", ")+`)`)

	dir := t.TempDir()
	path := writeConfig(t, dir, `
admin: { tokens: [ { name: ops, token: "ops-token-0123456789", scopes: [read, write] } ] }
connectors:
  fake: [ { name: acme, token: "fake-SENTINEL-token" } ]
routes:
  - name: pings
    match: { source: fake, kind: ping }
    thread: { agent: coder, resource: fake, thread: "{{.Connector}}" }
`)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	cfg, err := parseConfig(path, raw, noEnv, kinds)
	require.NoError(t, err)
	require.Equal(t, "eu", entries[fakeConfig](cfg.Connectors, "fake")[0].Region, "the kind's defaults")

	// Redacted in check: the entry is described without its secret, which the config
	// walk found by its type, so a connect check that leaks it prints it redacted.
	var out bytes.Buffer
	cfg.Describe(&out, path)
	require.Contains(t, out.String(), "  - fake/acme  region eu\n")
	require.Contains(t, cfg.Secrets(), "fake-SENTINEL-token")
	out.Reset()
	ok := runConnectChecks(context.Background(), &out, connectChecks(cfg, http.DefaultClient, storetest.Logger(t))[1:], time.Second, cfg.Secrets())
	require.False(t, ok)
	require.Equal(t, "FAIL  fake/acme: login refused for token [redacted]: check connectors.fake[0].token\n", out.String())

	// Served: built once with the pipeline, an event of the kind is routed to its thread,
	// counted under its own source label, and explain knows the source.
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	records := store.NewRecords(m.Store)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	require.NotNil(t, built.pipeline)
	ctx := context.Background()
	ingest := func(id, typ, body string) connectors.Outcome {
		t.Helper()
		ev := &inbox.Event{Source: "fake", Connector: "acme", DeliveryID: id, Type: typ, Body: []byte(body)}
		items, err := built.Items(ctx, ev)
		require.NoError(t, err)
		o, err := built.pipeline.Ingest(ctx, ev, items)
		require.NoError(t, err)
		return o
	}
	require.Equal(t, inbox.EventRouted, ingest("d1", "ping", `{"room": "r-1"}`).Status)
	k := inbox.ThreadKey{Agent: "coder", Resource: "fake", Thread: "acme"}
	recs, err := records.ThreadRecords(ctx, k)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "A fake ping", recs[0].Summary)

	base := "http://" + m.Addr().String()
	require.Contains(t, get(t, base+"/metrics", ""), `signalgate_events_received_total{connector="acme",outcome="routed",source="fake"} 1`)
	body := `{"source":"fake","connector":"acme","type":"ping","body":{}}`
	req, err := http.NewRequest(http.MethodPost, base+admin.Prefix+"/explain", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer ops-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	explained, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(explained))
	require.Contains(t, string(explained), `"pings"`, "the route matches in explain")
	require.Equal(t, anys(sourcesWith(nil, "fake")), sampleSources(t, get(t, base+"/openapi.json", "")))

	// Answered: the thread's origin is the ping's room, which the fake sender posts to;
	// a reply with watch: true goes through the kind's watch rule first.
	thread := base + "/v1/agents/coder/threads/fake/acme"
	code, answer := call(t, http.MethodPost, thread+"/replies", "dev-only-coder-token", `{"id": "a-1", "text": "on it", "watch": true}`)
	require.Equal(t, http.StatusAccepted, code, answer)
	select {
	case r := <-sender.sent:
		require.Equal(t, reply.NewTo("fake", "acme", fakePlace{Room: "R-1", Message: "d1"}), r.To)
	case <-time.After(procWait):
		t.Fatal("the fake kind's sender posted nothing")
	}
	require.Equal(t, "fake acme room R-1", cfg.places().Describe(reply.NewTo("fake", "acme", fakePlace{Room: "R-1"})), "the console's line")
	require.Equal(t, inbox.EventRouted, ingest("d2", "ping", `{"room": "r-secret"}`).Status)
	code, answer = call(t, http.MethodPost, thread+"/replies", "dev-only-coder-token",
		`{"id": "a-2", "text": "on it", "watch": true, "replyTo": {"source": "fake", "connector": "acme", "room": "R-SECRET"}}`)
	require.Equal(t, http.StatusBadRequest, code, answer)
	require.Contains(t, answer, `"unknown_resource"`, "the kind's own watch rule")
	require.Contains(t, answer, "room R-SECRET is closed")

	// Watched: a watch of the kind's source is read by its parser; an event no route
	// matches reaches the watching thread.
	code, answer = call(t, http.MethodPost, thread+"/watches", "dev-only-coder-token", `{"source": "fake", "resource": "r-2"}`)
	require.Equal(t, http.StatusCreated, code, answer)
	require.Contains(t, answer, `"resource":"R-2"`, "canonical, as the kind reads it")
	code, answer = call(t, http.MethodPost, thread+"/watches", "dev-only-coder-token", `{"source": "fake", "resource": "lobby"}`)
	require.Equal(t, http.StatusBadRequest, code, answer)
	require.Contains(t, answer, "resource: want a room (r-1)")
	code, answer = call(t, http.MethodPost, thread+"/watches", "dev-only-coder-token", `{"source": "fakee", "resource": "r-2"}`)
	require.Equal(t, http.StatusBadRequest, code, answer)
	require.Contains(t, answer, `source: unknown \"fakee\" (want `+strings.Join(sourcesWith(nil), ", ")+` or fake)`)
	require.Equal(t, inbox.EventRouted, ingest("d3", "chat", `{"room": "r-2"}`).Status, "no route matches a chat: the watch does")
	recs, err = records.ThreadRecords(ctx, k)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, "A fake chat", recs[2].Summary)

	// Documented: the kind's place fields and its source in the enums of the OpenAPI
	// document and MCP's tools.
	doc := get(t, base+"/openapi.json", "")
	require.Equal(t, anys(sourcesWith(answers, "fake")), schemaEnum(t, doc, "ReplyTo", "source"))
	require.Equal(t, "Fake room.", schemaProperty(t, doc, "ReplyTo", "room")["description"])
	require.Equal(t, anys(sourcesWith(watched, "fake")), schemaEnum(t, doc, "WatchRequest", "source"))
	c := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport("dev-only-coder-token")}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	schemas := map[string]string{}
	for _, tool := range tools.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		schemas[tool.Name] = string(raw)
	}
	require.Contains(t, schemas["watch"], `"enum":["github","slack","email","generic","alertmanager","linear","fake"]`)
	require.Contains(t, schemas["reply"], `"room":{"type":"string"}`)
}

// A kind without a watch resource parser cannot be watched: naming it in
// agents[].watch_connectors or a watched route is a config error, and its items that
// name watch resources are an error on the event, never silently unwatched.
func TestOneWayKindIsNotWatched(t *testing.T) {
	var built fakeParser
	kinds := append(builtinKinds(), Kind[fakeConfig]{Source: "fake", Describe: func(fakeConfig) string { return "" },
		Parser: func(_ []fakeConfig, b build) (admin.Parser, error) {
			built = fakeParser{pipeline: b.pipeline}
			return &built, nil
		}})
	_, err := parseConfig("t.yaml", []byte(`
agents: [ { id: coder, token: dev-only-coder-token, watch_connectors: [fake/acme] } ]
connectors:
  fake: [ { name: acme, token: t } ]
routes:
  - { name: w, match: { source: [github, fake] }, watched: true, thread: { agent: coder, resource: r, thread: t } }
`), noEnv, kinds)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.ElementsMatch(t, []string{
		`agents[0].watch_connectors[0]: source "fake" cannot be watched (` + strings.Join(sourcesWith(watched), ", ") + `)`,
		`routes[0].match.source[1]: source "fake" cannot be watched (` + strings.Join(sourcesWith(watched), ", ") + `), so watched: true never matches`,
	}, ce.Problems)

	dir := t.TempDir()
	path := writeConfig(t, dir, `
connectors:
  fake: [ { name: acme, token: t } ]
routes:
  - { name: pings, match: { source: fake }, thread: { agent: coder, resource: fake, thread: t } }
`)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	cfg, err := parseConfig(path, raw, noEnv, kinds)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	ctx := context.Background()
	ev := &inbox.Event{Source: "fake", Connector: "acme", DeliveryID: "d1", Type: "ping", Body: []byte(`{"room": "r-1"}`)}
	items, err := built.Items(ctx, ev)
	require.NoError(t, err)
	o, err := built.pipeline.Ingest(ctx, ev, items)
	require.NoError(t, err)
	require.Equal(t, inbox.EventRouted, o.Status, "the route still routes it")
	stored, err := store.NewExplain(m.Store).GetEvent(ctx, o.EventID)
	require.NoError(t, err)
	require.Contains(t, stored.Error, `watches: source "fake" names watch resources but no integration kind reads them`)
}

// A row that cannot work is refused before any config is read.
func TestKindRowsChecked(t *testing.T) {
	noop := func(fakeConfig) string { return "" }
	parse := func([]fakeConfig, build) (admin.Parser, error) { return nil, nil }
	sender := func([]fakeConfig, build) (reply.Sender, error) { return nil, nil }
	for name, tc := range map[string]struct {
		row  Kind[fakeConfig]
		want string
	}{
		"replier without place": {Kind[fakeConfig]{Source: "fake", Describe: noop, Parser: parse, Replier: sender, VerifiedBy: []string{"x"}},
			"kind fake: a Replier needs the Place its replyTo reads with"},
		"replier without provenance": {Kind[fakeConfig]{Source: "fake", Describe: noop, Parser: parse, Replier: sender, Place: reply.Codec[fakePlace]{}},
			"kind fake: a Replier needs the VerifiedBy that vouch for its places"},
		"place without replier": {Kind[fakeConfig]{Source: "fake", Describe: noop, Parser: parse, Place: reply.Codec[fakePlace]{}},
			"kind fake: Place and VerifiedBy belong to a kind with a Replier"},
		"rule without parser": {Kind[fakeConfig]{Source: "fake", Describe: noop, Parser: parse,
			WatchAdmit: func([]fakeConfig, build) watch.Admit { return nil }}, "kind fake: WatchAdmit needs the Watch resource parser"},
		"a field another kind types otherwise": {Kind[fakeConfig]{Source: "fake", Describe: noop, Parser: parse, Replier: sender,
			VerifiedBy: []string{"x"}, Place: reply.Codec[numberPlace]{}}, "field number is of JSON type string, another kind's of integer"},
		"twice": {Kind[fakeConfig]{Source: "github", Describe: noop, Parser: parse}, "kind github: listed twice"},
	} {
		_, err := parseConfig("t.yaml", []byte(`agents: [ { id: coder, token: dev-only-coder-token } ]`), noEnv, append(builtinKinds(), tc.row))
		require.ErrorContains(t, err, tc.want, name)
	}
}

// numberPlace names a field GitHub's places have, with another type.
type numberPlace struct {
	Number string `json:"number"`
}

func (numberPlace) Key() string                   { return "" }
func (numberPlace) Describe() string              { return "" }
func (numberPlace) WatchResource() (string, bool) { return "", false }

// TestBuiltinKindsKeepTheirPlacesAndResources: the table gives the reply outbox, the
// watches and the API documents the built-in kinds' places and resources, as the tests
// of those packages take them (kindstest).
func TestBuiltinKindsKeepTheirPlacesAndResources(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`agents: [ { id: coder, token: dev-only-coder-token } ]`), noEnv)
	require.NoError(t, err)
	require.Equal(t, kindstest.Sources(), cfg.sources())
	require.Equal(t, kindstest.Places(), cfg.places())
	got, want := cfg.watchResources(), kindstest.Resources()
	require.Equal(t, want.Sources(), got.Sources())
	for i := range want {
		require.Equal(t, reflect.ValueOf(want[i].Parse).Pointer(), reflect.ValueOf(got[i].Parse).Pointer(), want[i].Source)
	}
}

// TestBuiltinKindsKeepTheOpenAPISources: the served document lists the built-in kinds'
// sources in table order.
func TestBuiltinKindsKeepTheOpenAPISources(t *testing.T) {
	m := startMain(t, "")
	require.Equal(t, anys(kindstest.Sources()), sampleSources(t, get(t, "http://"+m.Addr().String()+"/openapi.json", "")))
}

func get(t *testing.T, url, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(raw)
}

func sampleSources(t *testing.T, doc string) []any {
	t.Helper()
	return schemaEnum(t, doc, "Sample", "source")
}

// schemaProperty is a property of a schema of the OpenAPI document doc.
func schemaProperty(t *testing.T, doc, schema, property string) map[string]any {
	t.Helper()
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d))
	return d.Components.Schemas[schema].Properties[property]
}

// schemaEnum is the enum of a property of a schema of the OpenAPI document doc.
func schemaEnum(t *testing.T, doc, schema, property string) []any {
	t.Helper()
	enum, _ := schemaProperty(t, doc, schema, property)["enum"].([]any)
	return enum
}

// call sends an agent API request with token and body, answering the status and body.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// sourcesWith is the built-in kinds' sources that keep keeps (nil: all), in table order,
// then more: what the fake kind's lists expect, whatever kinds the table holds, so a
// new kind is a row and not an edit of this test.
func sourcesWith(keep func(integration) bool, more ...string) []string {
	var out []string
	for _, k := range builtinKinds() {
		if keep == nil || keep(k) {
			out = append(out, k.source())
		}
	}
	return append(out, more...)
}

// answers keeps the kinds that answer (a place), watched those that can be watched.
func answers(k integration) bool { return k.place() != nil }
func watched(k integration) bool { return k.watchResource() != nil }
