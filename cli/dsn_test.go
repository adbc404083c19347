package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A PostgreSQL DSN's password, and the settings it sends the server other than those
// known to hold nothing to hide, never reach check's, check --connect's or serve's
// output, whatever its form, including DSNs pgx reads differently than url.Parse
// and DSNs pgx refuses.
func TestDSNPasswordNeverPrinted(t *testing.T) {
	addr := strings.TrimPrefix(closedURL(t), "http://")
	host, port, _ := strings.Cut(addr, ":")
	rebuilt := fmt.Sprintf("host=%s port=%s dbname=gw user=gw password=[redacted]", host, port)
	for _, c := range []struct {
		name, dsn, password string
		parses              bool
		settings            string // the settings as printed after the password
	}{
		{"url hash", "postgres://gw:Pa#ss-SENTINEL@" + addr + "/gw?sslmode=disable&connect_timeout=5", "Pa#ss-SENTINEL", true, ""},
		{"url question mark", "postgres://gw:Pa?ss-SENTINEL@" + addr + "/gw?sslmode=disable", "Pa?ss-SENTINEL", true, ""},
		{"key value", fmt.Sprintf("host=%s port=%s user=gw password='p w#SENTINEL' dbname=gw sslmode=disable", host, port), "p w#SENTINEL", true, ""},
		{"url settings", "postgres://gw:Pw-SENTINEL@" + addr + "/gw?sslmode=disable&options=-c%20app.token%3DOpt-SENTINEL&application_name=App-SENTINEL&search_path=gw",
			"Pw-SENTINEL", true, " application_name=[redacted] options=[redacted] search_path=gw"},
		{"url raw slash", "postgres://gw:Sl/ash-SENTINEL@" + addr + "/gw", "Sl/ash-SENTINEL", false, ""},
		{"url raw percent", "postgres://gw:Pe%zz-SENTINEL@" + addr + "/gw", "Pe%zz-SENTINEL", false, ""},
		{"url raw at", "postgres://gw:At@Tail-SENTINEL@" + addr + "/gw", "At@Tail-SENTINEL", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0" }
storage: { driver: postgres, dsn: %q }
agents: [ { id: coder, token: dev-only-coder-token } ]
log: { format: text }
`, c.dsn)), 0o600))
			wantCheck, wantConnect, wantServe := exitOK, exitFail, exitFail
			if !c.parses {
				wantCheck, wantConnect, wantServe = exitConfig, exitConfig, exitConfig
			}
			for _, run := range []struct {
				args []string
				want int
			}{
				{[]string{"check", "--config", path}, wantCheck},
				{[]string{"check", "--config", path, "--connect", "--timeout", "20s"}, wantConnect},
				{[]string{"serve", "--config", path}, wantServe},
			} {
				code, out, errOut := runCLI(t, nil, run.args...)
				all := out + errOut
				assert.Equal(t, run.want, code, "%v: %s", run.args, all)
				assert.NotContains(t, all, c.password, run.args)
				assert.NotContains(t, all, "SENTINEL", run.args)
				if !c.parses {
					assert.Contains(t, all, "storage.dsn: the PostgreSQL driver (pgx) cannot parse it", run.args)
					continue
				}
				switch run.args[0] {
				case "check":
					assert.Contains(t, out, "storage:  postgres "+rebuilt+c.settings+"\n", run.args)
				case "serve":
					assert.Contains(t, errOut, "start failed", run.args)
					assert.Contains(t, errOut, "open postgres database "+rebuilt+c.settings+": ", run.args)
				}
			}
		})
	}
}
