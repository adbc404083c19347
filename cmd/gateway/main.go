// Command gateway runs signalgate: webhook and mailbox connectors in, a durable
// notification inbox, and signals out to agent threads. The command line is package
// cli; the gateway itself, package gateway.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/signalgate/signalgate/cli"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv, version)
	stop()
	os.Exit(code)
}
