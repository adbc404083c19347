package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store/storetest"
)

// lockedBuffer is written by the exec goroutine while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, filepath.Join(dir, "data", "gw.db"), extra)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

func TestGatewayInProcess(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeConfig(t, dir, ""), noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()
	resp, err := http.Get("http://" + m.Addr().String() + "/nope")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.JSONEq(t, `{"error":{"code":"not_found","message":"Not Found"}}`, string(body))
}
