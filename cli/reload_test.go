package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/gateway"
	"github.com/signalgate/signalgate/gateway/gatewaytest"
	"github.com/signalgate/signalgate/store/storetest"
)

// gateway reload asks the running gateway to re-read its file (POST /-/reload): the new
// secret is in force; a broken file is refused with its problems and exit 1.
func TestReloadCommand(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, cliConfig)
	cfg, err := gateway.LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := gateway.New(cfg, storetest.Logger(t))
	m.ConfigPath, m.Lookup = path, noEnv
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	env := map[string]string{"SIGNALGATE_URL": "http://" + m.Addr().String(), "SIGNALGATE_ADMIN_TOKEN": cliAdminToken}

	code, out, errOut := runCLI(t, env, "reload")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "reloaded: the config file is in force\n", out)

	writeConfig(t, dir, cliConfig+"  - { name: ghost, match: { source: generic }, thread: { agent: nobody, resource: r, thread: t } }\n")
	code, out, errOut = runCLI(t, env, "reload")
	require.Equal(t, exitFail, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "gateway reload: HTTP 400 bad_request: config reload refused, the running config stays")
	require.Contains(t, errOut, "routes[1]")

	code, _, errOut = runCLI(t, map[string]string{"SIGNALGATE_URL": env["SIGNALGATE_URL"]}, "reload")
	require.Equal(t, exitConfig, code)
	require.Contains(t, errOut, "gateway reload: --token: required, or set SIGNALGATE_ADMIN_TOKEN")
}

// gateway health exits 0 while the gateway is ready and 1 when nothing answers; its
// default address follows SIGNALGATE_LISTEN, as the image's health check needs.
func TestHealthCommand(t *testing.T) {
	m, _ := startMainAt(t, t.TempDir(), "")
	base := "http://" + m.Addr().String()
	for _, args := range [][]string{{"health", "--url", base}, {"health", "--url", base, "--live"}} {
		code, out, errOut := runCLI(t, nil, args...)
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "200 OK", args)
	}
	_, port, err := net.SplitHostPort(m.Addr().String())
	require.NoError(t, err)
	code, out, errOut := runCLI(t, map[string]string{"SIGNALGATE_LISTEN": "0.0.0.0:" + port}, "health")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "GET /readyz: 200 OK\n", out)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	code, _, errOut = runCLI(t, nil, "health", "--url", "http://"+closed)
	require.Equal(t, exitFail, code)
	require.Contains(t, errOut, "gateway health: ")
}

// gateway --help and -h list the commands, as gateway help does.
func TestHelpListsTheCommands(t *testing.T) {
	code, help, _ := runCLI(t, nil, "help")
	require.Equal(t, exitOK, code)
	require.Contains(t, help, "\n  serve ")
	require.Contains(t, help, "\n  reload ")
	require.Contains(t, help, "\n  health ")
	for _, flag := range []string{"--help", "-h", "-help"} {
		code, out, errOut := runCLI(t, nil, flag)
		require.Equal(t, exitOK, code, flag)
		require.Equal(t, help, out, flag)
		require.Empty(t, errOut, flag)
	}
}

// gateway serve --help lists its flags and every variable serve reads: SIGNALGATE_CONFIG,
// each ${VAR} of the shipped config (commented examples included) and OTEL_*.
func TestServeHelpListsTheEnvironment(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "serve", "--help")
	require.Equal(t, exitOK, code)
	require.Empty(t, out)
	assert.Contains(t, errOut, "Usage: gateway serve [flags]")
	assert.Contains(t, errOut, "-config string")
	assert.Contains(t, errOut, "\nEnvironment:\n")
	vars := regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)`).FindAllStringSubmatch(string(gatewaytest.ShippedConfig(t)), -1)
	require.NotEmpty(t, vars)
	for _, v := range append(vars, []string{"", "SIGNALGATE_CONFIG"}, []string{"", "OTEL_EXPORTER_OTLP_ENDPOINT"}) {
		if v[1] != "VAR" { // the file's own explanation of ${VAR}
			assert.Contains(t, errOut, v[1])
		}
	}
}

// A port already in use names the variable that moves the shipped config's listener.
func TestServePortInUseNamesTheVariable(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { busy.Close() })
	shipped := gatewaytest.ShippedConfigFile(t)
	t.Chdir(t.TempDir()) // the shipped config's SQLite file is data/signalgate.db
	code, out, errOut := runCLI(t, map[string]string{"SIGNALGATE_LISTEN": busy.Addr().String()}, "serve", "--config", shipped)
	require.Equal(t, exitFail, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "address already in use: another process (another gateway?) serves there: stop it, "+
		"or set SIGNALGATE_LISTEN to another address, like 127.0.0.1:8081")
}

// The image's HEALTHCHECK runs the binary it ships (no shell, no curl): with the
// image's environment, against a ready gateway on that port, it exits 0.
func TestImageHealthCheck(t *testing.T) {
	raw, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^HEALTHCHECK .* CMD (\[.*\])$`).FindSubmatch(raw)
	require.NotNil(t, m, "the Dockerfile has a HEALTHCHECK in exec form")
	var cmd []string
	require.NoError(t, json.Unmarshal(m[1], &cmd))
	require.Equal(t, "/usr/local/bin/gateway", cmd[0], "the binary the image ships")
	require.Contains(t, string(raw), "COPY --from=build /out/gateway /usr/local/bin/gateway")

	env := dockerEnv(t)
	host, _, err := net.SplitHostPort(env["SIGNALGATE_LISTEN"])
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0", host)
	gw, _ := startMainAt(t, t.TempDir(), "")
	_, port, err := net.SplitHostPort(gw.Addr().String())
	require.NoError(t, err)
	env["SIGNALGATE_LISTEN"] = "0.0.0.0:" + port // the image's, on this test's port
	code, out, errOut := runCLI(t, env, cmd[1:]...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "GET /readyz: 200 OK\n", out)
}
