package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store/storetest"
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

// fakeParser is its parse step; serve builds it with the pipeline it ingests into.
type fakeParser struct{ pipeline *connectors.Pipeline }

func (fakeParser) Items(context.Context, *inbox.Event) ([]connectors.Item, error) {
	return []connectors.Item{{Kind: "ping", Priority: inbox.PriorityHigh, Summary: "A fake ping",
		Fields: connectors.Fields{Source: "fake", Connector: "acme", Kind: "ping"}}}, nil
}

// fakeKinds is the builtin table plus one row for the fake kind; built receives the
// parse step the gateway builds for it.
func fakeKinds(built *fakeParser) []integration {
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
	})
}

// TestNewKindIsOneRow adds an integration kind with one row of the table and sees it
// validated (unknown keys, its own rules, defaults), redacted in check, labelled in
// metrics, a known route source, explained and routed to a thread.
func TestNewKindIsOneRow(t *testing.T) {
	var built fakeParser
	kinds := fakeKinds(&built)

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
	require.ErrorContains(t, err, `routes[0].match.source[0]: unknown source "fakee" (want github, slack, email, generic, fake)`)

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
	describe(&out, path, cfg)
	require.Contains(t, out.String(), "  - fake/acme  region eu\n")
	require.Contains(t, cfg.Secrets(), "fake-SENTINEL-token")
	out.Reset()
	ok := runConnectChecks(context.Background(), &out, connectChecks(cfg, http.DefaultClient, storetest.Logger(t))[1:], time.Second, cfg.Secrets())
	require.False(t, ok)
	require.Equal(t, "FAIL  fake/acme: login refused for token [redacted]: check connectors.fake[0].token\n", out.String())

	// Served: built once with the pipeline, an event of the kind is routed to its thread,
	// counted under its own source label, and explain knows the source.
	m := NewMain(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	require.NotNil(t, built.pipeline)
	ctx := context.Background()
	ev := &inbox.Event{Source: "fake", Connector: "acme", DeliveryID: "d1", Type: "ping", Body: []byte(`{}`)}
	items, err := built.Items(ctx, ev)
	require.NoError(t, err)
	o, err := built.pipeline.Ingest(ctx, ev, items)
	require.NoError(t, err)
	require.Equal(t, inbox.EventRouted, o.Status)
	recs, err := m.Store.ThreadRecords(ctx, inbox.ThreadKey{Agent: "coder", Resource: "fake", Thread: "acme"})
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
	require.Equal(t, []any{"github", "slack", "email", "generic", "fake"}, sampleSources(t, get(t, base+"/openapi.json", "")))
}

// TestBuiltinKindsKeepTheOpenAPISources: the served document lists the sources as it
// always has.
func TestBuiltinKindsKeepTheOpenAPISources(t *testing.T) {
	m := startMain(t, "")
	require.Equal(t, []any{"github", "slack", "email", "generic"}, sampleSources(t, get(t, "http://"+m.Addr().String()+"/openapi.json", "")))
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
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &d))
	enum, _ := d.Components.Schemas["Sample"].Properties["source"]["enum"].([]any)
	return enum
}
