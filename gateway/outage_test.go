package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// The outage scenario: a webhook agent answers 503 for outageFor while outageEvents
// notifications arrive across outageThreads threads, then 200.
const (
	outageFor     = 2 * time.Minute
	outageEvents  = 50
	outageThreads = 5
	// outageProbe is the agents' probe_interval here: with the 30s default the first
	// probe after recovery could come just under 30 s later, leaving no margin for the
	// 30 s bound the scenario checks.
	outageProbe   = 10 * time.Second
	outageSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	outageAdmin   = "outage-admin-token-0123456789"
	outageRecover = 30 * time.Second
)

// hookReceiver is the agent's webhook endpoint: it verifies every delivery, answers 503
// until up, then 200, and records what it accepted.
type hookReceiver struct {
	t      *testing.T
	secret []byte

	mu        sync.Mutex
	up        bool
	refused   int                 // 503 answers: attempts and probes during the outage
	accepted  map[string]int      // webhook-id → 200 answers
	order     map[string][]string // thread → accepted contents, in order
	lastOK    time.Time
	allIn     chan struct{}
	closedAll bool
}

func newHookReceiver(t *testing.T) *hookReceiver {
	secret, err := stdwebhooks.ParseSecret(outageSecret)
	require.NoError(t, err)
	return &hookReceiver{t: t, secret: secret, accepted: map[string]int{}, order: map[string][]string{}, allIn: make(chan struct{})}
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || stdwebhooks.Verify(h.secret, r.Header, body, time.Now()) != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var p struct {
		ThreadID string `json:"threadId"`
		Signal   struct {
			Contents string `json:"contents"`
		} `json:"signal"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up {
		h.refused++
		http.Error(w, "deploying", http.StatusServiceUnavailable)
		return
	}
	id := r.Header.Get(stdwebhooks.HeaderID)
	h.accepted[id]++
	h.order[p.ThreadID] = append(h.order[p.ThreadID], p.Signal.Contents)
	h.lastOK = time.Now()
	if len(h.accepted) == outageEvents && !h.closedAll {
		h.closedAll = true
		close(h.allIn)
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) recover() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.up = true
	return time.Now()
}

func writeOutageConfig(t *testing.T, dir string, st store.Config, hook string) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("outage-%d.yaml", freePort(t)))
	cfg := fmt.Sprintf(`server: { listen: "127.0.0.1:%d", shutdown_grace: 2s }
storage: { driver: %s, dsn: %q, max_open_conns: 8 }
log: { level: info, format: json }
dispatch: { lease: 5s, poll_interval: 1s }
admin: { tokens: [ { name: ops, token: %q, scopes: [read] } ] }
agents:
  - id: hooks
    token: hooks-agent-token-0123456789
    target: { kind: webhook, url: %q, secret: %q, probe_interval: %s }
connectors:
  generic: [ { name: billing, secret: %q } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: hooks, resource: billing, thread: '{{index .Extra "customer"}}' }
`, freePort(t), st.Driver, st.DSN, outageAdmin, hook, outageSecret, outageProbe, outageSecret)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// sendBilling posts notification i (customer c<i%threads>) to a gateway, signed.
func sendBilling(t *testing.T, base string, i int) {
	t.Helper()
	secret, err := stdwebhooks.ParseSecret(outageSecret)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"kind": "invoice-failed", "summary": fmt.Sprintf("n%02d", i), "priority": "urgent",
		"attributes": map[string]any{"customer": fmt.Sprintf("c%d", i%outageThreads)}})
	require.NoError(t, err)
	id := fmt.Sprintf("evt_outage_%02d", i)
	now := time.Now()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/generic/billing", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(stdwebhooks.HeaderID, id)
	req.Header.Set(stdwebhooks.HeaderTimestamp, fmt.Sprint(now.Unix()))
	req.Header.Set(stdwebhooks.HeaderSignature, stdwebhooks.Sign(secret, id, now, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
}

// adminGet reads an admin or metrics path of a gateway.
func adminGet(t *testing.T, base, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+outageAdmin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	return string(raw)
}

// TestOutageRecovers plays a two-minute outage of a webhook agent in real time, on SQLite
// with one gateway and on PostgreSQL with two replicas (one SIGKILLed mid-outage): every
// notification is delivered within 30 s of recovery, each webhook-id accepted once, in
// order per thread, none failed.
func TestOutageRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("a two-minute outage in real time")
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st := store.Config{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "outage.db")}
		runOutage(t, st, 1)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv(storetest.PostgresEnv)
		if dsn == "" {
			t.Skip(storetest.PostgresEnv + " not set")
		}
		t.Parallel()
		runOutage(t, storetest.PostgresConfig(t, dsn), 2)
	})
}

func runOutage(t *testing.T, st store.Config, replicas int) {
	h := newHookReceiver(t)
	hook := httptest.NewServer(h)
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	start := time.Now()
	procs := make([]*gatewayProc, replicas)
	for i := range procs {
		procs[i] = startGateway(t, writeOutageConfig(t, dir, st, hook.URL+"/hook"))
	}
	recoverAt := start.Add(outageFor)
	// The notifications arrive during the first 50 s, round-robin over the replicas.
	for i := range outageEvents {
		if wait := time.Until(start.Add(time.Duration(i) * time.Second)); wait > 0 {
			time.Sleep(wait) // the scenario's arrival schedule, not waiting for work
		}
		sendBilling(t, procs[i%replicas].url, i)
	}
	if replicas > 1 {
		// A replica dies mid-outage; the other carries on alone.
		time.Sleep(time.Until(start.Add(60 * time.Second)))
		procs[1].kill()
	}
	live := procs[0]
	time.Sleep(time.Until(recoverAt))

	// Still down, as every replica sees it, with the whole backlog waiting.
	var targets struct {
		Targets []struct {
			Agent, State string
			Backlog      int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(adminGet(t, live.url, "/admin/v1/targets")), &targets))
	require.Len(t, targets.Targets, 1)
	require.Equal(t, "down", targets.Targets[0].State)
	require.Equal(t, outageEvents, targets.Targets[0].Backlog)
	metrics := adminGet(t, live.url, "/metrics")
	require.Contains(t, metrics, `signalgate_target_up{agent="hooks"} 0`)
	require.Contains(t, metrics, fmt.Sprintf(`signalgate_target_backlog{agent="hooks"} %d`, outageEvents))

	recovered := h.recover()
	select {
	case <-h.allIn:
	case <-time.After(3 * outageRecover): // only bounds a broken test
		h.mu.Lock()
		n := len(h.accepted)
		h.mu.Unlock()
		t.Fatalf("%d of %d delivered %s after recovery:\n%s", n, outageEvents, 3*outageRecover, live.stderr.String())
	}
	h.mu.Lock()
	took := h.lastOK.Sub(recovered)
	refused := h.refused
	for id, n := range h.accepted {
		require.Equal(t, 1, n, "webhook-id %s accepted once", id)
	}
	for th, got := range h.order {
		require.True(t, sort.StringsAreSorted(got), "thread %s in order: %v", th, got)
		require.Len(t, got, outageEvents/outageThreads)
	}
	h.mu.Unlock()
	require.LessOrEqual(t, took, outageRecover, "all delivered within 30 s of recovery")

	// The receiver answers before the gateway commits: every thread's log (read over its
	// stream, published after the commit) carries its notifications once they are stored.
	for i := range outageThreads {
		waitSignals(t, live.url, fmt.Sprintf("c%d", i), outageEvents/outageThreads)
	}
	db := openDB(t, st)
	var failed, delivered int
	require.NoError(t, db.Get(&failed, `SELECT COUNT(*) FROM records WHERE status = 'failed'`))
	require.NoError(t, db.Get(&delivered, `SELECT COUNT(*) FROM records WHERE status = 'delivered'`))
	require.Zero(t, failed)
	require.Equal(t, outageEvents, delivered)
	var attempts []int
	require.NoError(t, db.Select(&attempts, `SELECT attempts FROM records ORDER BY attempts`))
	hist := map[int]int{}
	for _, a := range attempts {
		hist[a]++
	}
	require.True(t, strings.Contains(adminGet(t, live.url, "/admin/v1/targets"), `"state":"up"`))
	t.Logf("%s, %d replica(s): %d refused attempts over %s (probes and the attempts before down), "+
		"attempts per record %v (attempts: records), all %d delivered %.1f s after recovery",
		st.Driver, replicas, refused, outageFor, hist, outageEvents, took.Seconds())
}

// waitSignals reads a thread's stream from the start until it has carried n signals.
func waitSignals(t *testing.T, base, thread string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait) // only bounds a broken test
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/agents/hooks/threads/billing/"+thread+"/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer hooks-agent-token-0123456789")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seen := 0
	for seen < n && sc.Scan() {
		if sc.Text() == "event: signal" {
			seen++
		}
	}
	require.Equal(t, n, seen, "thread %s: stream ended: %v", thread, sc.Err())
}
