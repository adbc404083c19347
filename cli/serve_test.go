package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

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
