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
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/gateway/gatewaytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// alertmanagerBin is Debian's prometheus-alertmanager (installed by .ci/alertmanager.sh).
const alertmanagerBin = "/usr/bin/prometheus-alertmanager"

const amWebhookToken = "am-webhook-token-0123456789"

// startAlertmanager runs the real Alertmanager on a free loopback port, sending its
// notifications to webhook with amWebhookToken, grouped by alertname and cluster with
// short waits; it returns the API's base URL. SIGNALGATE_TEST_ALERTMANAGER=1 (set by
// .ci/run) makes a missing binary a failure.
func startAlertmanager(t *testing.T, webhook string) string {
	t.Helper()
	if _, err := os.Stat(alertmanagerBin); err != nil {
		if os.Getenv("SIGNALGATE_TEST_ALERTMANAGER") == "1" {
			t.Fatalf("SIGNALGATE_TEST_ALERTMANAGER=1 but no %s (apt-get install prometheus-alertmanager)", alertmanagerBin)
		}
		t.Skipf("no %s: the Alertmanager test needs Debian's prometheus-alertmanager (SIGNALGATE_TEST_ALERTMANAGER=1 makes this a failure)", alertmanagerBin)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
global: { resolve_timeout: 1m }
route:
  receiver: gateway
  group_by: [alertname, cluster]
  group_wait: 100ms
  group_interval: 200ms
  repeat_interval: 1h
receivers:
  - name: gateway
    webhook_configs:
      - url: %q
        send_resolved: true
        http_config: { authorization: { credentials: %q } }
`, webhook, amWebhookToken)), 0o600))
	cmd := exec.Command(alertmanagerBin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0", "--cluster.listen-address=", "--log.level=info")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := regexp.MustCompile(`msg="Listening on" address=(\S+)`)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(procWait): // only bounds a broken test
		t.Fatal("Alertmanager did not say where it listens")
	}
	return ""
}

// postAlert sends one alert to Alertmanager's own API: firing until endsAt, resolved
// from then.
func postAlert(t *testing.T, api string, labels map[string]string, startsAt, endsAt time.Time) {
	t.Helper()
	body, err := json.Marshal([]map[string]any{{"labels": labels, "annotations": map[string]string{"summary": "p99 latency over 2s"},
		"startsAt": startsAt.UTC(), "endsAt": endsAt.UTC(), "generatorURL": "http://prometheus.example/graph"}})
	require.NoError(t, err)
	resp, err := http.Post(api+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
}

// TestAlertmanagerEndToEnd: the real Alertmanager notifies the gateway. A warning that
// fires and resolves while it is held reaches the model 0 times; a critical alert wakes
// the agent once, and its resolution is one short follow-up; the agent's answer with a
// silence appears in Alertmanager's own API, once, however often it is asked.
func TestAlertmanagerEndToEnd(t *testing.T) {
	var gw atomic.Pointer[url.URL]
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httputil.NewSingleHostReverseProxy(gw.Load()).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	api := startAlertmanager(t, proxy.URL+"/webhooks/alertmanager/prod")

	var mu sync.Mutex
	var wakes []string
	woke := make(chan struct{}, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		wakes = append(wakes, string(raw))
		mu.Unlock()
		woke <- struct{}{}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hook.Close()
	wait := func() {
		t.Helper()
		select {
		case <-woke:
		case <-time.After(procWait): // only bounds a broken test
			t.Fatal("no delivery reached the agent's webhook")
		}
	}
	delivered := func(substr string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, w := range wakes {
			if strings.Contains(w, substr) {
				n++
			}
		}
		return n
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 2s }
storage: { driver: sqlite, dsn: %q }
log: { level: warn, format: json }
dispatch: { poll_interval: 200ms }
replies: { poll_interval: 200ms }
agents:
  - { id: coder, token: %s, target: { kind: webhook, url: %q, secret: %q } }
connectors:
  alertmanager: [ { name: prod, bearer_token: %q, api_url: %q } ]
routes:
  - name: alerts
    match: { source: alertmanager }
    thread: { agent: coder }
policy:
  rules:
    # A warning is worth the agent's time only if it lasts: held ten minutes.
    - { match: { source: alertmanager, kind: alert-firing, priority: high }, action: defer, after: 10m }
    - { match: { source: alertmanager, kind: alert-resolved }, action: deliver }
`, filepath.Join(dir, "gw.db"), replyToken, hook.URL, gatewaytest.BillingSecret, amWebhookToken, api)), 0o600))
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	gw.Store(&url.URL{Scheme: "http", Host: m.Addr().String()})
	records := store.NewRecords(m.Store)
	ctx := context.Background()
	thread := func(alertname string) inbox.ThreadKey {
		return inbox.ThreadKey{Agent: "coder", Resource: "alertmanager/prod", Thread: alertname + "{cluster=eu1}"}
	}
	// recordsOf waits, bounded, until the thread's records satisfy ok.
	recordsOf := func(k inbox.ThreadKey, ok func([]inbox.Record) bool) []inbox.Record {
		t.Helper()
		var recs []inbox.Record
		require.Eventually(t, func() bool {
			var err error
			recs, err = records.ThreadRecords(ctx, k)
			require.NoError(t, err)
			return ok(recs)
		}, procWait, 20*time.Millisecond, "thread %v", k)
		return recs
	}
	kinds := func(recs []inbox.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.Kind+" "+string(r.Status))
		}
		return out
	}

	// A flapping warning: firing (held by the policy), then resolved before anyone was
	// told. The resolution supersedes the held firing; nothing reaches the model.
	now := time.Now()
	flap := map[string]string{"alertname": "DiskFilling", "cluster": "eu1", "severity": "warning", "instance": "db-1"}
	postAlert(t, api, flap, now.Add(-time.Minute), now.Add(time.Hour))
	recordsOf(thread("DiskFilling"), func(rs []inbox.Record) bool { return len(rs) == 1 })
	postAlert(t, api, flap, now.Add(-time.Minute), time.Now().Add(-time.Second))
	recs := recordsOf(thread("DiskFilling"), func(rs []inbox.Record) bool { return len(rs) == 2 })
	require.Equal(t, []string{"alert-firing superseded", "alert-resolved superseded"}, kinds(recs))
	require.Equal(t, "net state unchanged: resolved", recs[1].Reason)

	// A critical alert wakes the agent once.
	crit := map[string]string{"alertname": "HighLatency", "cluster": "eu1", "severity": "critical", "instance": "api-1"}
	postAlert(t, api, crit, now.Add(-time.Minute), now.Add(time.Hour))
	wait()
	recs = recordsOf(thread("HighLatency"), func(rs []inbox.Record) bool { return len(rs) == 1 && rs[0].Status == inbox.StatusDelivered })
	firing := recs[0]
	require.Equal(t, inbox.PriorityUrgent, firing.Priority)
	require.Equal(t, "Firing: HighLatency (cluster eu1, instance api-1): p99 latency over 2s", firing.Summary)
	fp := firing.SourceID
	require.Equal(t, "alert:"+fp, firing.NetKey)
	require.Equal(t, 1, delivered("HighLatency"))

	// Its resolution is one short follow-up.
	postAlert(t, api, crit, now.Add(-time.Minute), time.Now().Add(-time.Second))
	wait()
	recs = recordsOf(thread("HighLatency"), func(rs []inbox.Record) bool { return len(rs) == 2 && rs[1].Status == inbox.StatusDelivered })
	require.Equal(t, "Resolved: HighLatency (cluster eu1, instance api-1)", recs[1].Summary)
	require.Equal(t, 2, delivered("HighLatency"))
	require.Zero(t, delivered("DiskFilling"), "the flapping warning reached the model 0 times")

	// The agent silences it, asked twice: one silence, in Alertmanager's own API.
	base := "http://" + m.Addr().String() + "/v1/agents/coder/threads/" + url.PathEscape("alertmanager/prod") + "/" + url.PathEscape("HighLatency{cluster=eu1}")
	ask := map[string]any{"id": "silence-highlatency-1", "text": "Known: the eu1 failover is running; back within the hour.",
		"replyTo": map[string]any{"source": "alertmanager", "connector": "prod", "fingerprint": fp, "silence": "2h",
			"alertLabels": []string{"alertname=~.*"}}} // the agent's labels are never the matchers
	var queued map[string]any
	require.Equal(t, http.StatusAccepted, agentCall(t, http.MethodPost, base+"/replies", ask, &queued), queued)
	require.Equal(t, http.StatusAccepted, agentCall(t, http.MethodPost, base+"/replies", ask, &queued), queued)
	var sent map[string]any
	require.Eventually(t, func() bool {
		agentCall(t, http.MethodGet, base+"/replies/silence-highlatency-1", nil, &sent)
		return sent["status"] == "sent"
	}, procWait, 20*time.Millisecond)

	resp, err := http.Get(api + "/api/v2/silences")
	require.NoError(t, err)
	defer resp.Body.Close()
	var silences []struct {
		ID        string `json:"id"`
		CreatedBy string `json:"createdBy"`
		Comment   string `json:"comment"`
		StartsAt  time.Time
		EndsAt    time.Time
		Matchers  []struct {
			Name, Value      string
			IsRegex, IsEqual bool
		}
		Status struct{ State string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&silences))
	require.Len(t, silences, 1, "exactly one silence")
	s := silences[0]
	assert.Equal(t, sent["platformId"], s.ID)
	assert.Equal(t, "coder (signalgate)", s.CreatedBy)
	assert.Equal(t, "Known: the eu1 failover is running; back within the hour.\n\n(signalgate:reply:silence-highlatency-1)", s.Comment)
	assert.Equal(t, "active", s.Status.State)
	assert.InDelta(t, 2*time.Hour, s.EndsAt.Sub(s.StartsAt), float64(time.Second))
	var ms []string
	for _, mt := range s.Matchers {
		require.True(t, mt.IsEqual)
		require.False(t, mt.IsRegex)
		ms = append(ms, mt.Name+"="+mt.Value)
	}
	assert.ElementsMatch(t, []string{"alertname=HighLatency", "cluster=eu1", "severity=critical", "instance=api-1"}, ms)

	// Over the connector's max_silence (24h) is refused by name, nothing queued.
	ask["id"], ask["replyTo"].(map[string]any)["silence"] = "silence-highlatency-2", "48h"
	var refused map[string]any
	require.Equal(t, http.StatusBadRequest, agentCall(t, http.MethodPost, base+"/replies", ask, &refused), refused)
	require.Contains(t, fmt.Sprint(refused), "replyTo.silence: 48h0m0s is over the connector's max_silence 24h0m0s")
}
