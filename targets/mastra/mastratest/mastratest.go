// Package mastratest starts the real-Mastra interop harness (interop/mastra) for tests.
package mastratest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Server starts interop/mastra/server.mjs (a real Mastra server whose model is a
// deterministic mock; delay slows each model turn) on a free loopback port and returns
// its base URL; it is killed at cleanup. Skipped unless the harness's node_modules
// exist (.ci/mastra.sh installs them) or SIGNALGATE_MASTRA_INTEROP names its folder.
func Server(t *testing.T, delay time.Duration) string {
	t.Helper()
	dir := os.Getenv("SIGNALGATE_MASTRA_INTEROP")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "interop", "mastra")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@mastra", "core")); err != nil {
		t.Skip("Mastra interop harness not installed (run .ci/mastra.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "DELAY_MS="+strconv.Itoa(int(delay.Milliseconds())))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready on") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("Mastra server did not start")
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}
