package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store/storetest"
)

// A Mastra agent that answers by itself needs a connector that sends replies: without
// one the gateway refuses to start, naming the key; with one it starts.
func TestAutoReplyNeedsAReplier(t *testing.T) {
	open := func(connectors string) error {
		t.Helper()
		dir := t.TempDir()
		cfg, err := ParseConfig("c.yaml", fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
agents:
  - { id: helper, target: { kind: mastra, url: "http://127.0.0.1:1", agent_id: helper, reply: auto } }
%s`, filepath.Join(dir, "gw.db"), connectors), noEnv)
		require.NoError(t, err)
		m := New(cfg, storetest.Logger(t))
		err = m.Open(context.Background())
		t.Cleanup(func() { _ = m.Close() })
		return err
	}
	require.ErrorContains(t, open(""), "agents[0].target.reply: auto needs a connector that sends replies")
	require.NoError(t, open(`
connectors:
  slack: [ { name: acme, signing_secret: s3cret-signing-0123, bot_token: xoxb-1, api_url: "http://127.0.0.1:1/api/" } ]
`))
}
