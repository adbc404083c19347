package gatewaytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A newcomer's edit of the working config.yaml does not change the config the tests
// check; a change staged to be committed does; without git, the working file is read.
func TestShippedConfigIsTheCommittedOne(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	write := func(content string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(root, "config.yaml"), []byte(content), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "pkg"), 0o755))

	write("shipped: true\n")
	require.Equal(t, "shipped: true\n", string(shippedConfigIn(t, root)), "no repository: the working file")

	git("init", "-q")
	git("add", "go.mod", "config.yaml")
	git("commit", "-q", "-m", "shipped")
	write("shipped: edited\n")
	t.Chdir(filepath.Join(root, "pkg"))
	require.Equal(t, "shipped: true\n", string(ShippedConfig(t)), "an edit of the working file is not what the tests check")

	git("add", "config.yaml")
	require.Equal(t, "shipped: edited\n", string(ShippedConfig(t)), "a staged change is")
	raw, err := os.ReadFile(ShippedConfigFile(t))
	require.NoError(t, err)
	require.Equal(t, "shipped: edited\n", string(raw))
}
