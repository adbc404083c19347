package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The command's exit codes (package cli).
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2
)

// binary is the gateway command, built once for the tests that run it as a process
// of its own (to SIGKILL it like a crashing deployment, or to run its command line
// beside a gateway served in process).
var binary struct {
	dir  string
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "signalgate-gateway-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary.dir = dir
	code := m.Run()
	a2aHarness.Close()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// gatewayBinary builds ./cmd/gateway once, with the race detector when these tests
// have it, and returns its path.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	path, err := buildGateway()
	require.NoError(t, err)
	return path
}

// buildGateway is gatewayBinary for goroutines other than the test's: it returns the
// failure instead of ending the test.
func buildGateway() (string, error) {
	binary.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			binary.err = fmt.Errorf("the go tool builds the gateway command: %w", err)
			return
		}
		path := filepath.Join(binary.dir, "gateway")
		args := []string{"build", "-o", path}
		if raceEnabled() {
			args = append(args, "-race")
		}
		var out bytes.Buffer
		cmd := exec.Command(goTool, append(args, module+"cmd/gateway")...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			binary.err = fmt.Errorf("go build ./cmd/gateway: %w\n%s", err, out.String())
			return
		}
		binary.path = path
	})
	return binary.path, binary.err
}

// raceEnabled says this test binary was built with the race detector.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// runGatewayProc runs `gateway args…` as a process of its own to its end, in this
// process's environment: its exit code and output.
func runGatewayProc(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBinary(t, os.Environ(), args...)
}

// runCLI runs `gateway args…` with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	vars := []string{}
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	return runBinary(t, vars, args...)
}

func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(gatewayBinary(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(procWait):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gateway %s did not end within %s:\n%s", strings.Join(args, " "), procWait, stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}
