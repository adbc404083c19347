package gateway

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
	"github.com/signalgate/signalgate/watch"
)

// A Slack thread a reply watches reaches its agent thread through the gateway although no
// route matches Slack (the agent may watch it through agents[].watch_connectors): the
// record carries route watch. Another thread of the channel is not heard.
func TestWatchedSlackThreadThroughTheGateway(t *testing.T) {
	const signing = "s3cret-signing-0123"
	dir := t.TempDir()
	cfg, err := ParseConfig("c.yaml", fmt.Appendf(nil, `
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: %q }
agents: [ { id: coder, token: dev-only-coder-token, watch_connectors: [slack/acme] } ]
connectors:
  slack: [ { name: acme, signing_secret: %s, bot_token: xoxb-1, api_url: "http://127.0.0.1:1/api/" } ]
routes:
  - name: billing
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: invoices }
`, filepath.Join(dir, "gw.db"), signing), noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	k := inbox.ThreadKey{Agent: "coder", Resource: "slack", Thread: "conv"}
	resource, ok := slack.Place{Team: "T1", Channel: "C1", ThreadTS: "1.2"}.WatchResource()
	require.True(t, ok)
	_, added, err := m.Generation().Watches.WatchConversation(context.Background(), k, "slack", "acme", resource, "r1")
	require.NoError(t, err)
	require.True(t, added)
	// Slack's ts is when the message was posted: after the watch, or the watch's silent
	// baseline keeps it out.
	now := strconv.FormatInt(time.Now().Unix()+1, 10) + ".000100"

	post := func(id, threadTS string) int {
		t.Helper()
		body := fmt.Appendf(nil, `{"type":"event_callback","team_id":"T1","event_id":%q,"event":{"type":"message","user":"U1","text":"still broken",`+
			`"ts":%q,"thread_ts":%q,"channel":"C1","channel_type":"channel","event_ts":%q}}`, id, now, threadTS, now)
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, err := http.NewRequest(http.MethodPost, "http://"+m.Addr().String()+"/webhooks/slack/acme", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(slackTimestamp, ts)
		req.Header.Set("X-Slack-Signature", "v0="+hmacHex([]byte(signing), []byte("v0:"+ts+":"+string(body))))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, post("Ev1", "1.2"), "routed by the watch")
	require.Equal(t, http.StatusAccepted, post("Ev2", "7.7"), "another thread: unrouted")
	rs, _, err := store.NewAdmin(m.Store).ListRecords(context.Background(), inbox.RecordFilter{Agent: k.Agent, Resource: k.Resource, Thread: k.Thread, Limit: 10})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, watch.Route, rs[0].Route)
}
