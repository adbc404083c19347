package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets a test re-run this binary as the gateway itself, so signal handling
// is exercised on a real process.
func TestMain(m *testing.M) {
	if os.Getenv("SIGNALGATE_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

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

// SIGTERM ends serve: in-flight work finishes within the grace, the database closes
// (its write-ahead log checkpointed away) and the process exits 0.
func TestServeShutsDownOnSignal(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir)
	cmd := exec.Command(os.Args[0], "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "SIGNALGATE_TEST_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, stderr.String())
	_, url, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)

	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready"} {
		resp, err := http.Get(url + path)
		require.NoError(t, err)
		var body map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, want, body["status"])
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "exit status must be 0; stderr:\n%s", stderr.String())
	case <-time.After(60 * time.Second): // hang guard only, far beyond the 5s grace
		t.Fatalf("gateway did not exit after SIGTERM; stderr:\n%s", stderr.String())
	}
	require.Contains(t, stderr.String(), `"msg":"stopped"`)
	// A cleanly closed SQLite database checkpoints and removes its write-ahead log.
	_, err = os.Stat(filepath.Join(dir, "data", "gw.db-wal"))
	require.True(t, os.IsNotExist(err), "WAL file left behind: database not closed")
}

func writeConfig(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
agents: [ { id: coder, token: dev-only-coder-token } ]
`, filepath.Join(dir, "data", "gw.db"))
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}
