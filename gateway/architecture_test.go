package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/signalgate/signalgate/"

// packageDeps is every package the named packages depend on, directly or not, as
// `go list` resolves them (tests excluded).
func packageDeps(t *testing.T, pkgs ...string) map[string]map[string]bool {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go tool is needed to read the import graph")
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	cmd := exec.CommandContext(t.Context(), goTool, args...)
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", out)
	graph := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		deps := map[string]bool{}
		for _, d := range fields[1:] {
			deps[d] = true
		}
		graph[strings.TrimPrefix(fields[0], module)] = deps
	}
	require.Len(t, graph, len(pkgs))
	return graph
}

// The domain knows no transport: the packages below serve no HTTP, so none of them
// may reach echo, however indirectly (the agent API and MCP are their own packages).
func TestDomainPackagesDoNotDependOnEcho(t *testing.T) {
	domain := []string{"store", "delivery", "approval", "metrics", "inbox", "condition", "retention", "agent"}
	for pkg, deps := range packageDeps(t, domain...) {
		require.False(t, deps["github.com/labstack/echo/v4"], "%s depends on echo", pkg)
	}
}

// The admin API and the console show domain read models and receive the store as
// interfaces they declare: neither reaches the store package, however indirectly.
func TestAdminAndConsoleDoNotDependOnStore(t *testing.T) {
	for pkg, deps := range packageDeps(t, "admin", "console") {
		require.False(t, deps[module+"store"], "%s depends on store", pkg)
	}
}
