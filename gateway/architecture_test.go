package gateway

import (
	"os"
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

// modulePackages lists the module's packages (tests excluded), as `go list` finds them.
func modulePackages(t *testing.T) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go tool is needed to read the import graph")
	out, err := exec.CommandContext(t.Context(), goTool, "list", module+"...").Output()
	require.NoError(t, err, "go list: %s", out)
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module))
	}
	return pkgs
}

// The gateway stands on the domain and the command line on the gateway: no package
// below reaches gateway or cli, however indirectly, and gateway does not reach cli.
// The command itself only calls cli.
func TestLayersAboveTheDomain(t *testing.T) {
	top := map[string]bool{"gateway": true, "cli": true, "cmd/gateway": true}
	var below []string
	for _, p := range modulePackages(t) {
		if !top[p] {
			below = append(below, p)
		}
	}
	for pkg, deps := range packageDeps(t, below...) {
		require.False(t, deps[module+"gateway"], "%s depends on gateway", pkg)
		require.False(t, deps[module+"cli"], "%s depends on cli", pkg)
	}
	require.False(t, packageDeps(t, "gateway")["gateway"][module+"cli"], "gateway depends on cli")

	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-f", `{{join .Imports " "}}`, module+"cmd/gateway").Output()
	require.NoError(t, err, "go list: %s", out)
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module) {
			require.Equal(t, module+"cli", imp, "cmd/gateway imports %s: the command only calls cli", imp)
		}
	}
}

// directImports is each module package's imports within the module (tests excluded).
func directImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go tool is needed to read the import graph")
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	require.NoError(t, err, "go list: %s", out)
	graph := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports := map[string]bool{}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				imports[strings.TrimPrefix(imp, module)] = true
			}
		}
		graph[strings.TrimPrefix(fields[0], module)] = imports
	}
	return graph
}

// mapRow is one row of docs/architecture.md's package table: the packages it names, the
// imports it lists, and whether the list says it is partial ("…") or whole.
type mapRow struct {
	line     int
	packages []string
	imports  []string
	partial  bool
	above    bool // "every package below": the wiring, checked by TestLayersAboveTheDomain
	none     bool // "—"
}

// cellNames reads the backquoted package names of a cell. A name that is not a package
// of its own but follows one with a slash is its sibling: "`connectors/github`, `slack`"
// names connectors/github and connectors/slack.
func cellNames(cell string, packages map[string]map[string]bool) []string {
	var names []string
	parent := ""
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		name := parts[i]
		_, known := packages[name]
		switch {
		case strings.Contains(name, "/"):
			parent = name[:strings.LastIndex(name, "/")+1]
		case !known && parent != "":
			name = parent + name
		}
		names = append(names, name)
	}
	return names
}

func readArchitectureMap(t *testing.T, packages map[string]map[string]bool) []mapRow {
	t.Helper()
	doc, err := os.ReadFile("../docs/architecture.md")
	require.NoError(t, err)
	var rows []mapRow
	inTable := false
	for i, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| package | owns | imports") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		require.Len(t, cells, 3, "docs/architecture.md:%d: a row has three cells", i+1)
		last := strings.TrimSpace(cells[2])
		rows = append(rows, mapRow{
			line:     i + 1,
			packages: cellNames(cells[0], packages),
			imports:  cellNames(last, packages),
			partial:  strings.Contains(last, "…"),
			above:    last == "every package below",
			none:     last == "—",
		})
	}
	require.NotEmpty(t, rows, "docs/architecture.md has no package table")
	return rows
}

// The map stays true: every package of the module has a row in docs/architecture.md's
// table, every row names packages that exist, and each row's imports are imports its
// packages have. A list not marked partial ("…") is the whole list.
func TestArchitectureMapNamesEveryPackage(t *testing.T) {
	graph := directImports(t)
	rows := readArchitectureMap(t, graph)
	mapped := map[string]int{}
	for _, row := range rows {
		require.NotEmpty(t, row.packages, "docs/architecture.md:%d names no package", row.line)
		union := map[string]bool{}
		for _, pkg := range row.packages {
			imports, ok := graph[pkg]
			require.True(t, ok, "docs/architecture.md:%d names %s, which is not a package of the module", row.line, pkg)
			require.Zero(t, mapped[pkg], "docs/architecture.md:%d maps %s again (first at line %d)", row.line, pkg, mapped[pkg])
			mapped[pkg] = row.line
			for imp := range imports {
				union[imp] = true
			}
		}
		if row.above {
			continue
		}
		if row.none {
			require.Empty(t, union, "docs/architecture.md:%d says %v import no module package", row.line, row.packages)
			continue
		}
		listed := map[string]bool{}
		for _, imp := range row.imports {
			listed[imp] = true
			require.True(t, union[imp], "docs/architecture.md:%d lists %s among the imports of %v, which do not import it", row.line, imp, row.packages)
		}
		if !row.partial {
			for imp := range union {
				require.True(t, listed[imp], "docs/architecture.md:%d: %v import %s, which the row does not list (or mark the list partial with …)", row.line, row.packages, imp)
			}
		}
	}
	for pkg := range graph {
		require.NotZero(t, mapped[pkg], "%s is missing from docs/architecture.md's package table", pkg)
	}
}
