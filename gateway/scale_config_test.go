package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/delivery"
)

func TestDispatchConfig(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	cfg, err := ParseConfig("t.yaml", []byte("dispatch: { lease: 5s, poll_interval: 1s }\n"), lookup)
	require.NoError(t, err)
	require.Equal(t, DispatchConfig{Lease: 5 * time.Second, PollInterval: time.Second}, cfg.Dispatch)

	cfg, err = ParseConfig("t.yaml", []byte("{}\n"), lookup)
	require.NoError(t, err)
	require.Equal(t, DispatchConfig{Lease: delivery.DefaultLease, PollInterval: delivery.DefaultPollInterval}, cfg.Dispatch)

	_, err = ParseConfig("t.yaml", []byte("dispatch: { lease: 10ms }\n"), lookup)
	require.ErrorContains(t, err, "dispatch.lease: must be at least 1s")
}

// TestLoadScenarioConfig: what `loadgen config` prints is a valid gateway config.
func TestLoadScenarioConfig(t *testing.T) {
	raw := "server: { listen: \"127.0.0.1:0\" }\n" + load.DefaultScenario().GatewayConfig()
	cfg, err := ParseConfig("load.yaml", []byte(raw), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Len(t, cfg.Routes, 3)

	// With a LangGraph runtime (loadgen --target langgraph) too.
	sc := load.DefaultScenario()
	sc.Runtime = &load.Runtime{Kind: load.RuntimeLangGraph, URL: "http://127.0.0.1:18625", CallbackURL: "http://127.0.0.1:8080"}
	cfg, err = ParseConfig("load.yaml", []byte("server: { listen: \"127.0.0.1:0\" }\n"+sc.GatewayConfig()), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Equal(t, "langgraph", cfg.Agents[0].Target.Kind)
	sc.Runtime = &load.Runtime{Kind: load.RuntimeA2A, URL: "http://127.0.0.1:18642", CallbackURL: "http://127.0.0.1:8080"}
	cfg, err = ParseConfig("load.yaml", []byte("server: { listen: \"127.0.0.1:0\" }\n"+sc.GatewayConfig()), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Equal(t, "a2a", cfg.Agents[0].Target.Kind)
}
