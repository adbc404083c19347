package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/signalgate/signalgate/admin"
)

const reloadUsage = `Usage: gateway reload [flags]

Asks a running gateway to re-read the config file it was started with and put it in
force without a restart (POST /-/reload, an admin token with the write scope): routes,
policy, agents, connectors, and every secret given as <key>_file, whose file is read
again. A process keeps the environment it started with, so a ${VAR} it did not have is
refused: restart it, or move the secret to a file. An invalid file is refused with its
problems (exit 1) and the running config stays.

Example:
  export SIGNALGATE_ADMIN_TOKEN=dev-only-admin-token-change-me
  gateway reload

Flags:
`

func reloadCmd(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := newFlagSet("reload", reloadUsage, stderr)
	c := clientFlags(fs, lookup, envAdminToken)
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway reload: unexpected argument %q\n", fs.Arg(0))
		return exitConfig
	}
	if err := c.check(); err != nil {
		fmt.Fprintf(stderr, "gateway reload: %v\n", err)
		return exitConfig
	}
	if err := c.do(ctx, http.MethodPost, admin.ReloadPath, nil, nil); err != nil {
		fmt.Fprintf(stderr, "gateway reload: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "reloaded: %s is in force\n", "the config file")
	return exitOK
}
