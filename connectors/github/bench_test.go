package github

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors/connectorstest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
)

// benchClients is the number of concurrent senders.
const benchClients = 64

// benchBody returns a real issue_comment payload (about 10 KB) whose comment id
// is a fixed-width placeholder, so every request can carry a distinct comment.
func benchBody(b *testing.B) (template []byte, placeholder string) {
	b.Helper()
	ex := examples(b, "api.github.com")
	m := pick(b, ex, "issue_comment", "created", func(m map[string]any) bool {
		return len(encode(b, m)) < 11000
	})
	placeholder = "900000000000"
	set(m, "comment.id", jsonNumber(placeholder))
	return encode(b, m), placeholder
}

type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// BenchmarkGitHubIngest signs and POSTs deliveries over loopback through the echo
// stack into a SQLite-backed inbox: each request stores an event and a record.
func BenchmarkGitHubIngest(b *testing.B) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	st, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "gw.db")}, log)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	if err != nil {
		b.Fatal(err)
	}
	h := newHarnessWith(b, testConfig(), 0, inbox.NewService(store.NewInbox(st), pol))
	runLoad(b, h.e)
}

// BenchmarkGitHubIngestFakeInbox is the same path with an in-memory inbox: the
// cost of HTTP, verification, parsing, mapping and routing without the database.
func BenchmarkGitHubIngestFakeInbox(b *testing.B) {
	h := newHarnessWith(b, testConfig(), 0, connectorstest.NewIngester())
	runLoad(b, h.e)
}

// BenchmarkGitHubVerifyOnly is the ceiling: read, verify and answer 200.
func BenchmarkGitHubVerifyOnly(b *testing.B) {
	srv := server.New(server.Config{}, slog.New(slog.DiscardHandler))
	srv.Echo().POST(RoutePath, func(c echo.Context) error {
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		if gh.ValidateSignature(c.Request().Header.Get(gh.SHA256SignatureHeader), body, []byte(testSecret)) != nil {
			return server.Unauthorized()
		}
		return c.JSON(http.StatusOK, map[string]bool{"ok": true})
	})
	runLoad(b, srv.Echo())
}

func runLoad(b *testing.B, e *echo.Echo) {
	tmpl, placeholder := benchBody(b)
	ts := httptest.NewServer(e)
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: benchClients * 2, MaxIdleConnsPerHost: benchClients * 2, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()
	url := ts.URL + "/webhooks/github/acme"

	var seq atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetBytes(int64(len(tmpl)))
	b.SetParallelism(max(1, (benchClients+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			n := seq.Add(1)
			body := bytes.Replace(tmpl, []byte(placeholder), fmt.Appendf(nil, "%012d", 100000000000+n), 1)
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issue_comment")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", n))
			req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			local = append(local, time.Since(t0))
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	p := func(q float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(q*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(p(0.50), "p50_ms")
	b.ReportMetric(p(0.99), "p99_ms")
}
