package gateway

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/inbox"
)

// The shipped config.yaml as the storm runs it (loadgen storm-config --shipped: the storm's
// GitHub and Slack connectors put in, server, storage and log left to the load script) is
// a valid config; the storm follows the gateway's own agent with the token the gateway
// reads for it; and the shipped routes send every kind of event the storm sends — CI,
// reviews and comments, pushes, secret scanning alerts, Slack DMs — to the thread the
// storm follows it on, so `storm --shipped` counts no event as unreachable for want of a
// route.
func TestShippedConfigRoutesTheStorm(t *testing.T) {
	octokit, err := filepath.Abs("../connectors/github/testdata/octokit")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(octokit, "api.github.com", "index.json")); err != nil {
		t.Skip("testdata/octokit missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	raw, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	sc := load.DefaultStormScenario()

	for _, env := range []map[string]string{nil, {"CODER_AGENT_TOKEN": "coder-token-from-the-environment"}} {
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		id, token, err := load.ShippedAgent(raw, lookup)
		require.NoError(t, err)
		sc.Agent, sc.AgentToken = id, token
		doc, err := sc.ShippedConfig(raw)
		require.NoError(t, err)
		for _, line := range strings.Split(doc, "\n") {
			for _, k := range []string{"server:", "storage:", "log:"} {
				require.False(t, strings.HasPrefix(line, k), "the load script writes %s itself", k)
			}
		}
		cfg, err := ParseConfig("shipped-storm.yaml", []byte("server: { listen: \"127.0.0.1:0\" }\nstorage: { driver: sqlite, dsn: storm.db }\n"+
			"log: { level: warn, format: json }\n"+doc), lookup)
		require.NoError(t, err)
		require.Equal(t, cfg.Agents[0].ID, id)
		require.Equal(t, string(cfg.Agents[0].Token), token, "the storm's token is the one the gateway reads")
	}
	id, token, err := load.ShippedAgent(raw, noEnv)
	require.NoError(t, err)
	require.Equal(t, "dev-only-coder-token", token, "unset, the shipped default")
	sc.Agent, sc.AgentToken = id, token
	doc, err := sc.ShippedConfig(raw)
	require.NoError(t, err)
	cfg, err := ParseConfig("shipped-storm.yaml", []byte("storage: { driver: sqlite, dsn: storm.db }\n"+doc), noEnv)
	require.NoError(t, err)
	x, err := NewExplainer(context.Background(), cfg, &ExplainStore{}, true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	samples, err := sc.Samples(octokit)
	require.NoError(t, err)
	require.Len(t, samples, 9)
	for _, s := range samples {
		headers := map[string]string{}
		for k := range s.Header {
			headers[k] = s.Header.Get(k)
		}
		e, err := x.Explain(context.Background(), admin.Sample{Source: s.Source, Connector: s.Connector, Headers: headers, Body: s.Body})
		require.NoError(t, err, s.Name)
		require.Len(t, e.Notifications, 1, "%s: %s %s", s.Name, e.Status, e.Reason)
		n := e.Notifications[0]
		require.Equal(t, s.Thread, n.Thread, s.Name)
		if s.Urgent {
			require.Equal(t, inbox.PriorityUrgent, n.Notification.Priority, "%s wakes its thread at once", s.Name)
		}
	}
}
