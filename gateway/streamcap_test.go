package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store/storetest"
)

// Streams hold connections for as long as they are open: all of them together hold at
// most three quarters of server.max_connections, so a crowd of streams (agents' or
// console viewers') still leaves connections for ingest.
func TestStreamsLeaveConnectionsForIngest(t *testing.T) {
	conf := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s, max_connections: 8 }
storage: { driver: sqlite, dsn: %q }
log: { level: warn }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, filepath.Join(t.TempDir(), "gw.db"), billingConfig)
	cfg, err := ParseConfig("streams.yaml", []byte(conf), noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })

	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream := func(i int) *http.Response {
		t.Helper()
		u := fmt.Sprintf("http://%s/v1/agents/coder/threads/r/t%d/stream", m.Addr(), i)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer dev-only-coder-token")
		resp, err := client.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// 8 - 8/4 = 6 streams, the agent's own cap (1024) notwithstanding.
	for i := range 6 {
		require.Equal(t, http.StatusOK, stream(i).StatusCode, "stream %d", i)
	}
	refused := stream(6)
	require.Equal(t, http.StatusTooManyRequests, refused.StatusCode)
	body, err := io.ReadAll(refused.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "server.max_connections")

	code, out := postGeneric(t, m, "streams-ingest-1", []byte(`{"kind":"invoice-failed","summary":"Invoice 1 failed"}`), true)
	require.Equal(t, http.StatusOK, code, out)
}
