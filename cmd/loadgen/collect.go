package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/telemetry/otlptest"
)

// runCollect is `loadgen collect`: an OTLP/HTTP trace sink for `scripts/load.sh --otel`.
// The gateway exports to it (OTEL_EXPORTER_OTLP_ENDPOINT); it decodes every request as
// a collector would, keeps only the count (memory stays flat), answers it on GET /count
// and prints it when stopped.
func runCollect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:4318", "loopback address to serve POST /v1/traces on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := loopbackAddr(*listen); err != nil {
		fmt.Fprintf(stderr, "loadgen collect: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "loadgen collect: %v\n", err)
		return 1
	}
	if err := collect(ctx, ln, stdout); err != nil {
		fmt.Fprintf(stderr, "loadgen collect: %v\n", err)
		return 1
	}
	return 0
}

// collectCount is what GET /count answers and collect prints at the end.
type collectCount struct {
	Spans int `json:"spans"`
}

// collect serves the sink on ln until ctx ends, then prints the span count.
func collect(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	rcv := &otlptest.Receiver{Keep: false}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/traces", rcv)
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(collectCount{Spans: rcv.Count()})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	return json.NewEncoder(stdout).Encode(collectCount{Spans: rcv.Count()})
}

// loopbackAddr keeps the sink on this machine, like the traffic.
func loopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--listen %q: only loopback addresses are allowed", addr)
	}
	return nil
}
