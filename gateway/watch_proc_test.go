package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

const watchSlackSigning = "watch-slack-signing-0123"

// writeWatchConfig is a gateway whose agent hears Slack only through watches: no route
// matches Slack.
func writeWatchConfig(t *testing.T, dir string, port int, st store.Config) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("watch-%d.yaml", port))
	cfg := fmt.Sprintf(`server: { listen: "127.0.0.1:%d", shutdown_grace: 2s }
storage: { driver: %s, dsn: %q }
log: { level: warn, format: json }
agents: [ { id: coder, token: %s, watch_connectors: [slack/acme] } ]
connectors:
  slack: [ { name: acme, signing_secret: %s } ]
routes:
  - name: billing
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: invoices }
`, port, st.Driver, st.DSN, replyToken, watchSlackSigning)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// sendSlackMessage delivers a signed Slack message posted now in channel and answers
// the status and the outcome's record count.
func sendSlackMessage(t *testing.T, base, eventID, channel string) (int, int) {
	t.Helper()
	ts := fmt.Sprintf("%d.%06d", time.Now().Unix()+1, time.Now().Nanosecond()/1000)
	body := fmt.Appendf(nil, `{"type":"event_callback","team_id":"T1","event_id":%q,"event":{"type":"message","user":"U1",`+
		`"text":"any news?","ts":%q,"channel":%q,"channel_type":"channel","event_ts":%q}}`, eventID, ts, channel, ts)
	now := strconv.FormatInt(time.Now().Unix(), 10)
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/slack/acme", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(slackTimestamp, now)
	req.Header.Set("X-Slack-Signature", "v0="+hmacHex([]byte(watchSlackSigning), []byte("v0:"+now+":"+string(body))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Records int `json:"records"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out.Records
}

// Watches are rows: created on one replica they route events arriving at another at
// once, and a SIGKILL of the replica that created them loses none; the restarted
// gateway lists and routes by every one.
func TestWatchesSurviveKillAndRouteOnEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts gateway processes")
	}
	const threads = 20
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			replicas := 1
			if b.Config.Driver == store.DriverPostgres {
				replicas = 3
			}
			dir := t.TempDir()
			procs := make([]*gatewayProc, replicas)
			for i := range procs {
				procs[i] = startGateway(t, writeWatchConfig(t, dir, freePort(t), b.Config))
			}
			watchURL := func(p *gatewayProc, i int) string {
				return fmt.Sprintf("%s/v1/agents/coder/threads/slack/t%d/watches", p.url, i)
			}
			ids := make([]string, threads)
			for i := range threads {
				var w watch.Watch
				code := agentCall(t, http.MethodPost, watchURL(procs[0], i), map[string]any{"source": "slack", "resource": fmt.Sprintf("CW%d", i)}, &w)
				require.Equal(t, http.StatusCreated, code)
				ids[i] = w.ID
				// Created on the first replica, heard through the last at once: no replica
				// keeps watches of its own.
				code, records := sendSlackMessage(t, procs[replicas-1].url, fmt.Sprintf("Ev-at-once-%d", i), fmt.Sprintf("CW%d", i))
				require.Equal(t, http.StatusOK, code, "watch %d routes on replica %d", i, replicas-1)
				require.Equal(t, 1, records)
			}

			procs[0].kill()
			restarted := startGateway(t, procs[0].cfg)
			listed := 0
			for i := range threads {
				var page struct {
					Watches []watch.Watch `json:"watches"`
				}
				require.Equal(t, http.StatusOK, agentCall(t, http.MethodGet, watchURL(restarted, i), nil, &page))
				require.Len(t, page.Watches, 1, "thread t%d", i)
				require.Equal(t, ids[i], page.Watches[0].ID)
				listed++
			}
			routed := 0
			for i := range threads {
				via := restarted
				if replicas > 1 {
					via = procs[1+i%(replicas-1)]
				}
				code, records := sendSlackMessage(t, via.url, fmt.Sprintf("Ev-after-%d", i), fmt.Sprintf("CW%d", i))
				require.Equal(t, http.StatusOK, code)
				routed += records
			}
			require.Equal(t, threads, routed)
			code, _ := sendSlackMessage(t, restarted.url, "Ev-unwatched", "CNOBODY")
			require.Equal(t, http.StatusAccepted, code, "an unwatched channel is unrouted")
			t.Logf("%d replicas: %d watches created, %d listed after SIGKILL and restart, %d of %d routed after it", replicas, threads, listed, routed, threads)
		})
	}
}
