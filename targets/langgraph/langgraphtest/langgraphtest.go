// Package langgraphtest starts the real LangGraph Agent Server interop harness
// (interop/langgraph) for tests.
package langgraphtest

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

// Assistants of the harness's graphs (graphs.mjs): echo answers each message, ask
// always calls interrupt() first. Both take context.delay_ms.
const (
	Echo = "echo"
	Ask  = "ask"
)

// Dir is the harness folder: SIGNALGATE_LANGGRAPH_INTEROP, else interop/langgraph.
func Dir() string {
	if dir := os.Getenv("SIGNALGATE_LANGGRAPH_INTEROP"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "interop", "langgraph")
}

// Server starts interop/langgraph/server.mjs (the JS Agent Server, in memory, with
// deterministic graphs) on a free loopback port and returns its base URL; it is killed
// at t's cleanup, so a package's tests share one by running as subtests of one test.
// Skipped unless the harness's node_modules exist (.ci/langgraph.sh installs them).
func Server(t testing.TB) string {
	t.Helper()
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-api")); err != nil {
		t.Skip("LangGraph interop harness not installed (run .ci/langgraph.sh)")
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
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "DATA_DIR="+t.TempDir(), "LOG_LEVEL=warn")
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
	case <-time.After(90 * time.Second): // only bounds a broken start
		t.Fatal("LangGraph server did not start")
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}
