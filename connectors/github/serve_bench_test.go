package github

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/server"
)

// BenchmarkGitHubServeWired serves issue_comment deliveries (about 10 KB) in process
// through a handler wired as the gateway wires it (own-reply check and repository
// record on) into an in-memory inbox, and reports the CPU each costs.
func BenchmarkGitHubServeWired(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	srv := server.New(server.Config{}, log)
	router, err := connectors.NewRouter(allGitHubRoute(), []string{"coder"})
	if err != nil {
		b.Fatal(err)
	}
	handler, err := NewHandler([]Config{testConfig()}, connectors.NewPipeline(router, connectorstest.NewIngester(), log),
		log, fixedNow, WithOwnReplies(&fakeOwn{}), WithSeenRepos(&fakeSeenRepos{}))
	if err != nil {
		b.Fatal(err)
	}
	handler.Mount(srv.Echo())
	tmpl, placeholder := benchBody(b)
	b.SetBytes(int64(len(tmpl)))
	b.ReportAllocs()
	cpu0, n := processCPU(b), 0
	for b.Loop() {
		n++
		body := bytes.Replace(tmpl, []byte(placeholder), fmt.Appendf(nil, "%012d", 100000000000+n), 1)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/github/acme", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "issue_comment")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", n))
		req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
		rec := httptest.NewRecorder()
		srv.Echo().ServeHTTP(rec, req)
		if rec.Code/100 != 2 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(n), "cpu-µs/event")
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
