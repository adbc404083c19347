package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/signalgate/signalgate/store/storetest"
)

// TestMain lets a test re-run this binary as the gateway itself, so signal handling
// is exercised on a real process.
func TestMain(m *testing.M) {
	if os.Getenv("SIGNALGATE_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	code := m.Run()
	a2aHarness.Close()
	os.Exit(code)
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

func TestServeShutsDownOnSignal(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
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

func TestServeReportsUnopenableDatabase(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	path := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
log: { format: text }
`, filepath.Join(blocker, "sub", "gw.db"))), 0o600))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", path}, &out, &errOut, noEnv)
	require.Equal(t, exitFail, code)
	require.Contains(t, errOut.String(), filepath.Join(blocker, "sub", "gw.db"))
}

func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"migrate", "--config", cfg}, &out, &errOut, noEnv), errOut.String())
	require.Regexp(t, `^database at schema version \d+\n$`, out.String())
}

func TestMainInProcess(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeConfig(t, dir, ""), noEnv)
	require.NoError(t, err)
	m := NewMain(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()
	resp, err := http.Get("http://" + m.Addr().String() + "/nope")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.JSONEq(t, `{"error":{"code":"not_found","message":"Not Found"}}`, string(body))
}
