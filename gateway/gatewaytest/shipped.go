package gatewaytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// ShippedConfig is the repository's config.yaml as git's index holds it: the committed
// file, or the change staged to be committed. The README invites a newcomer to edit the
// working file (better, a copy: config.local.yaml); such an edit must not turn the tests
// of the shipped config red. Outside a git checkout (a source archive, no git) it is
// the working file.
func ShippedConfig(t testing.TB) []byte {
	t.Helper()
	return shippedConfigIn(t, moduleRoot(t))
}

// ShippedConfigFile is ShippedConfig written to a file of its own (in a temporary
// directory), for the commands that take --config.
func ShippedConfigFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, ShippedConfig(t), 0o600))
	return path
}

func shippedConfigIn(t testing.TB, root string) []byte {
	t.Helper()
	// ./ makes the path relative to -C's directory, not to the repository's top.
	if out, err := exec.Command("git", "-C", root, "show", ":./config.yaml").Output(); err == nil {
		return out
	}
	raw, err := os.ReadFile(filepath.Join(root, "config.yaml"))
	require.NoError(t, err)
	return raw
}

// moduleRoot is the nearest directory at or above the working directory holding
// go.mod: the repository's root, from any package's tests.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the working directory")
		dir = parent
	}
}
