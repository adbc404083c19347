package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// fakeTargetConfig is a new target kind's keys under agents[].target, as its package
// writes them.
type fakeTargetConfig struct {
	Endpoint string        `yaml:"endpoint"`
	APIKey   secret.Secret `yaml:"api_key"`
	Region   string        `yaml:"region"`
}

func (c fakeTargetConfig) WithDefaults() fakeTargetConfig {
	if c.Region == "" {
		c.Region = "eu"
	}
	return c
}

func (c fakeTargetConfig) Validate() error {
	if c.Endpoint == "" {
		return errors.New("endpoint: required for kind fake")
	}
	return nil
}

// fakeRuntime is the kind's target and the endpoint its runtime posts run ends to: the
// runtime, not the agent API, tells the gateway when a run is over.
type fakeRuntime struct {
	agent     string
	runs      *agent.Runs
	notify    func([]inbox.ThreadKey)
	delivered chan agent.Handoff
}

func (f *fakeRuntime) Deliver(_ context.Context, d agent.Handoff) (agent.Result, error) {
	f.delivered <- d
	return agent.Result{Status: http.StatusAccepted}, nil
}

func (f *fakeRuntime) Mount(e *echo.Echo) {
	e.POST("/targets/fake/"+f.agent+"/runs/:run/end", f.runEnded)
}

func (f *fakeRuntime) runEnded(c echo.Context) error {
	var body struct {
		ResourceID string `json:"resourceId"`
		ThreadID   string `json:"threadId"`
		Status     string `json:"status"`
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&body); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "unreadable body")
	}
	k := inbox.ThreadKey{Agent: f.agent, Resource: body.ResourceID, Thread: body.ThreadID}
	_, idle, err := f.runs.Close(c.Request().Context(), k, c.Param("run"), body.Status, agent.CauseCrashed)
	if err != nil {
		return err
	}
	if idle {
		f.notify([]inbox.ThreadKey{k})
	}
	return c.NoContent(http.StatusNoContent)
}

// fakeTargets is the builtin table plus one row for the fake kind; built receives the
// runtime the gateway builds for its agent.
func fakeTargets(built **fakeRuntime) []targetKind {
	return append(builtinTargets(), TargetKind[fakeTargetConfig]{
		Kind:     "fake",
		Presence: agent.PresenceRuntime,
		Recovery: delivery.RuntimeKeepsAccepted,
		Describe: func(c fakeTargetConfig) string { return "endpoint " + c.Endpoint + " in " + c.Region },
		Build: func(a agent.Config, _ fakeTargetConfig, b targetBuild) (delivery.Route, []background, error) {
			*built = &fakeRuntime{agent: a.ID, runs: b.runs, notify: b.notify, delivered: make(chan agent.Handoff, 8)}
			return b.route(a, *built), nil, nil
		},
		Probe: func(_ context.Context, _ agent.Config, c fakeTargetConfig, key string, _ *http.Client) (string, error) {
			// A careless client library that puts the credential in its error.
			return "", errors.New("login refused for key " + c.APIKey.Reveal() + ": check " + key + ".api_key")
		},
	})
}

// TestNewTargetIsOneRow adds a target kind with one row of the table and sees it
// validated (its keys, another kind's keys, its own rules and defaults, no token needed
// when the runtime reports its runs), redacted and described in check, probed by
// check --connect, delivered to, told of run ends by its runtime's own webhook, kept
// out of in-flight recovery as its rule says, labelled in metrics and listed in the
// OpenAPI enums.
func TestNewTargetIsOneRow(t *testing.T) {
	var rt *fakeRuntime
	kinds := fakeTargets(&rt)

	_, err := parseConfigOf("t.yaml", []byte(`
agents:
  - { id: bot, target: { kind: fake, region: us, colour: blue, agent_id: x } }
  - { id: coder, token: coder-token-0123456789, target: { kind: stream, endpoint: "https://x.example" } }
  - { id: typo, token: typo-token-0123456789, target: { kind: fakee } }
`), noEnv, builtinKinds(), kinds)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.ElementsMatch(t, []string{
		"agents[0].target.colour: unknown key (line 3)",
		"agents[0].target.agent_id: only a mastra, openai-agents or claude-agents target takes this key (kind is fake; line 3)",
		"agents[1].target.endpoint: only a fake target takes this key (kind is stream; line 4)",
		"agents[0].target.endpoint: required for kind fake",
		`agents[2].target.kind: unknown "fakee" (want stream, mastra, webhook, langgraph, a2a, openai-agents, claude-agents or fake)`,
	}, ce.Problems, "the fake agent needs no token: its runtime reports its runs")

	dir := t.TempDir()
	path := writeConfig(t, dir, `
admin: { tokens: [ { name: ops, token: "ops-token-0123456789", scopes: [read, write] } ] }
`)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw = bytes.Replace(raw, []byte("agents: [ { id: coder, token: dev-only-coder-token } ]"), []byte(`agents:
  - { id: bot, token: bot-token-0123456789, target: { kind: fake, endpoint: "https://runtime.example/v1/acme", api_key: "fake-SENTINEL-key" } }`), 1)
	cfg, err := parseConfigOf(path, raw, noEnv, builtinKinds(), kinds)
	require.NoError(t, err)
	require.Equal(t, "eu", cfg.Agents[0].Target.Settings.(fakeTargetConfig).Region, "the kind's defaults")
	require.Equal(t, agent.PresenceRuntime, cfg.Agents[0].Target.Presence)

	// Redacted: the key is found by its type, so check's line shows the row's summary
	// and a probe that leaks it prints it redacted.
	var out bytes.Buffer
	cfg.Describe(&out, path)
	require.Contains(t, out.String(), "  - bot → fake endpoint https://runtime.example/v1/acme in eu (run lease 5m0s)\n")
	require.Contains(t, cfg.Secrets(), "fake-SENTINEL-key")
	out.Reset()
	ok := runConnectChecks(context.Background(), &out, connectChecks(cfg, http.DefaultClient, storetest.Logger(t))[1:], time.Second, cfg.Secrets())
	require.False(t, ok)
	require.Equal(t, "FAIL  agent bot (fake): login refused for key [redacted]: check agents[0].target.api_key\n", out.String())

	// Delivered to: an urgent notification wakes the idle thread through the kind's target.
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	require.NotNil(t, rt)
	base := "http://" + m.Addr().String()
	k := inbox.ThreadKey{Agent: "bot", Resource: "r", Thread: "t"}
	req, err := http.NewRequest(http.MethodPost, base+"/v1/agents/bot/threads/r/t/notifications",
		strings.NewReader(`{"kind":"deploy","summary":"Deploy failed","priority":"urgent"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer bot-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var d agent.Handoff
	select {
	case d = <-rt.delivered:
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("the fake target was never delivered to")
	}
	require.Equal(t, agent.BehaviorWake, d.Behavior)
	require.Equal(t, k, d.Thread)
	require.NotEmpty(t, d.RunID)
	// Once the stream shows the signal, its delivery is counted, under the kind's label.
	require.Equal(t, d.Signal.ID, firstSignalAs(t, m, "bot-token-0123456789", "/v1/agents/bot/threads/r/t/stream")["id"])
	metrics := get(t, base+"/metrics", "")
	require.Contains(t, metrics, `signalgate_signals_sent_total{action="wake",target="fake"} 1`)
	require.Contains(t, metrics, `signalgate_delivery_attempts_total{outcome="delivered",target="fake"} 1`)

	// Presence from the runtime: it posts the run's end to what the kind mounted, and the
	// thread is idle. The run crashed, but what the runtime accepted is not recovered:
	// the kind's rule says the runtime keeps it.
	resp, err = http.Post(base+"/targets/fake/bot/runs/"+d.RunID+"/end", "application/json",
		strings.NewReader(`{"resourceId":"r","threadId":"t","status":"aborted"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	live, err := m.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.Nil(t, live, "the runtime's report ended the run")
	pending, err := store.NewQueue(m.Store).PendingRecoveries(context.Background(), k, 10)
	require.NoError(t, err)
	require.Empty(t, pending, "the runtime keeps what it accepted")

	// Listed: the OpenAPI document's target enums come from the table.
	doc := get(t, base+"/openapi.json", "")
	want := []any{"stream", "mastra", "webhook", "langgraph", "a2a", "openai-agents", "claude-agents", "fake"}
	require.Equal(t, want, schemaEnum(t, doc, "Attempt", "target"))
	require.Equal(t, want, schemaEnum(t, doc, "TargetStatus", "kind"))
}

// TestBuiltinTargetsKeepTheirKeys: the table takes the keys the targets always took,
// and each kind refuses the others' keys by name.
func TestBuiltinTargetsKeepTheirKeys(t *testing.T) {
	got := problems(t, `
agents:
  - { id: hooks, token: hooks-token-0123456789, target: { kind: webhook, url: "https://x.example/h", secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, agent_id: a, max_followed: 3 } }
  - { id: support, target: { kind: mastra, url: "http://localhost:4111", agent_id: a, secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw } }
  - { id: coder, token: coder-token-0123456789, target: { kind: stream, url: "https://x.example", headers: { A: b }, timeout: 5s } }
`, noEnv)
	require.ElementsMatch(t, []string{
		"agents[0].target.agent_id: only a mastra, openai-agents or claude-agents target takes this key (kind is webhook; line 3)",
		"agents[0].target.max_followed: only a mastra target takes this key (kind is webhook; line 3)",
		"agents[1].target.secret: only a webhook target takes this key (kind is mastra; line 4)",
		"agents[2].target.url: only a mastra, webhook, langgraph or a2a target takes this key (kind is stream; line 5)",
		"agents[2].target.headers: only a mastra, webhook, langgraph or a2a target takes this key (kind is stream; line 5)",
	}, got)

	w := configWalk{listKeys: true}
	cfg, err := ParseConfig("c.yaml", []byte(minimal), env("CODER_TOKEN", "a-long-enough-token"))
	require.NoError(t, err)
	w.walk(reflect.ValueOf(cfg).Elem(), nil, "")
	var keys []string
	for _, k := range w.keys {
		if rest, ok := strings.CutPrefix(k, "agents[].target."); ok {
			keys = append(keys, rest)
		}
	}
	require.ElementsMatch(t, []string{"kind", "url", "agent_id", "secret", "secrets", "headers", "timeout", "concurrency",
		"max_attempts", "max_age", "failure_threshold", "probe_interval", "max_followed", "stream_options", "reply",
		"assistant_id", "input", "busy.urgent", "busy.high", "busy.medium", "busy.low", "busy.default", "config", "context",
		"callback_url", "callback_token", "poll_interval", "api_key", "base_url", "environment_id", "environment",
		"webhook_secret", "beta"}, keys)
}
