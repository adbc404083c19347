package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped config switches to PostgreSQL with two variables; either one alone is a
// config error naming both keys, and no SQLite file is made in a directory named after
// the URL (password included).
func TestShippedConfigStorageFromEnvironment(t *testing.T) {
	const pgURL = "postgres://gw:Pw-SENTINEL@db.internal:5432/gw"
	shipped := shippedConfig(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		code int
	}{
		{"dsn only", map[string]string{"SIGNALGATE_DSN": pgURL}, exitConfig},
		{"postgresql scheme", map[string]string{"SIGNALGATE_DSN": "postgresql://gw:Pw-SENTINEL@db/gw"}, exitConfig},
		{"driver only", map[string]string{"SIGNALGATE_STORAGE_DRIVER": "postgres"}, exitConfig},
		{"both", map[string]string{"SIGNALGATE_STORAGE_DRIVER": "postgres", "SIGNALGATE_DSN": pgURL}, exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, errOut := runCLI(t, c.env, "check", "--config", shipped)
			require.Equal(t, c.code, code, out+errOut)
			assert.NotContains(t, out+errOut, "SENTINEL")
			if c.code == exitOK {
				assert.Contains(t, out, "storage:  postgres host=db.internal port=5432 dbname=gw user=gw password=[redacted]")
				return
			}
			assert.Contains(t, errOut, "storage.dsn: ")
			assert.Contains(t, errOut, "storage.driver")
		})
	}
}

// shippedConfig is the absolute path of the repository's config.yaml (tests may chdir).
func shippedConfig(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../config.yaml")
	require.NoError(t, err)
	return p
}
