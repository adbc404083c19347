package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScenarioSetsOnlyWhatIsNotGiven(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	events := fs.Int("events", 10, "")
	threads := fs.Int("threads", 100, "")
	subs := fs.Int("subscribers", 0, "")
	clients := fs.Int("clients", 16, "")
	require.NoError(t, fs.Parse([]string{"--events", "500"}))
	require.NoError(t, applyScenario(fs, "threads10k"))
	require.Equal(t, 500, *events, "an explicit flag wins")
	require.Equal(t, 10000, *threads)
	require.Equal(t, 1000, *subs)
	require.Equal(t, 32, *clients)
	require.ErrorContains(t, applyScenario(fs, "nope"), `unknown "nope"`)
}

// storm-config --shipped prints the shipped config with the storm's connectors and without
// the sections the load script writes; --defaults and --shipped are two configs, not one.
func TestStormConfigShipped(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, stormConfig([]string{"--shipped", "--config", "../../config.yaml"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "id: coder")
	require.Contains(t, out.String(), `secret: "storm-github-secret-0123"`)
	require.Contains(t, out.String(), `signing_secret: "storm-slack-signing-secret"`)
	require.NotRegexp(t, `(?m)^(server|storage|log):`, out.String())

	errOut.Reset()
	require.Equal(t, 2, stormConfig([]string{"--shipped", "--defaults"}, io.Discard, &errOut))
	require.Contains(t, errOut.String(), "give one")
	errOut.Reset()
	require.Equal(t, 2, stormConfig([]string{"--shipped", "--config", "no-such.yaml"}, io.Discard, &errOut))
	require.Contains(t, errOut.String(), "no-such.yaml")
}

// `loadgen config --target langgraph` (or a2a) points the scenario's agent at the
// counting proxy, its webhooks (push notifications) at the gateway; an unknown target is
// refused.
func TestConfigTargetRuntime(t *testing.T) {
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"config", "--target", "langgraph", "--runtime-proxy", "127.0.0.1:19001",
		"--callback-url", "http://127.0.0.1:19002"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	require.Contains(t, out.String(), `target: { kind: langgraph, url: "http://127.0.0.1:19001", assistant_id: echo, callback_url: "http://127.0.0.1:19002"`)
	out.Reset()
	require.Equal(t, 0, run(context.Background(), []string{"config", "--target", "a2a", "--callback-url", "http://127.0.0.1:19002"}, &out, &errOut))
	require.Contains(t, out.String(), `target: { kind: a2a, url: "http://127.0.0.1:18642/echo", callback_url: "http://127.0.0.1:19002" }`)
	require.Equal(t, 2, run(context.Background(), []string{"config", "--target", "mastra"}, &out, &errOut))
	require.Contains(t, errOut.String(), `--target: unknown "mastra"`)
}
