package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const silenceAdminToken = "silence-admin-token-0123456789"

// silenceReplicaConfig routes billing events to each customer's thread of coder.
const silenceReplicaConfig = `
admin: { tokens: [ { name: ops, token: "` + silenceAdminToken + `", scopes: [read, write] } ] }
connectors:
  generic: [ { name: billing, secret: "` + billingSecret + `" } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: '{{index .Extra "customer"}}' }
`

// adminCall makes an admin request to m and decodes the answer into out.
func adminCall(t *testing.T, m *Gateway, method, path string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://"+m.Addr().String()+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+silenceAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out), string(raw))
	}
	return resp.StatusCode
}

// On PostgreSQL a silence made on one replica holds what another ingests, and its
// early expire on a third releases it: one summary per thread for what accumulated,
// every record told once, none lost.
func TestSilenceAcrossThreeReplicas(t *testing.T) {
	dsn := os.Getenv(storetest.PostgresEnv)
	if dsn == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	ctx := context.Background()
	clock := deliverytest.NewClock(time.Now().UTC().Truncate(time.Second)) // signatures carry the wall clock
	storage := storetest.PostgresConfig(t, dsn)
	replicas := make([]*Gateway, 3)
	for i := range replicas {
		cfg, err := LoadConfig(writeConfig(t, t.TempDir(), silenceReplicaConfig), noEnv)
		require.NoError(t, err)
		cfg.Storage = storage
		m := New(cfg, storetest.Logger(t))
		m.Now = clock.Now
		require.NoError(t, m.Open(ctx))
		t.Cleanup(func() { require.NoError(t, m.Close()) })
		replicas[i] = m
	}
	one, two, three := replicas[0], replicas[1], replicas[2]
	framesStore := store.NewFrames(one.Store)

	var sil silence.Silence
	require.Equal(t, http.StatusCreated, adminCall(t, one, http.MethodPost, "/admin/v1/silences", map[string]any{
		"matchers": []map[string]any{{"name": "resource", "value": "billing"}},
		"endsAt":   clock.Now().Add(2 * time.Hour).Format(time.RFC3339), "createdBy": "ops", "comment": "billing migration"}, &sil))
	// What replica two's refresh loop does every 500 ms (silence.TestRefreshLoop).
	require.NoError(t, two.Silences.Refresh(ctx))

	customers := map[string]int{"acme": 4, "globex": 3, "initech": 1}
	n := 0
	for customer, count := range customers {
		for i := range count {
			n++
			body := fmt.Appendf(nil, `{"kind":"invoice-failed","summary":"Invoice %d for %s failed","priority":"high","attributes":{"customer":%q}}`, i, customer, customer)
			code, out := postGeneric(t, two, fmt.Sprintf("msg_%d", n), body, true)
			require.Equal(t, http.StatusOK, code, out)
		}
	}
	for _, m := range replicas {
		_, err := m.Dispatcher.RunOnce(ctx)
		require.NoError(t, err)
	}
	for customer, count := range customers {
		k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: customer}
		recs, err := store.NewRecords(two.Store).ThreadRecords(ctx, k)
		require.NoError(t, err)
		require.Len(t, recs, count)
		for _, r := range recs {
			require.Equal(t, inbox.StatusPending, r.Status)
			require.Equal(t, "silence:"+sil.ID, r.HeldBy, "held on the replica that ingested it")
		}
		frames, err := framesStore.FramesAfter(ctx, k, 0, 100)
		require.NoError(t, err)
		require.Empty(t, frames, "nothing sent while silenced")
	}

	var ended silence.Silence
	require.Equal(t, http.StatusOK, adminCall(t, three, http.MethodDelete, "/admin/v1/silences/"+sil.ID, nil, &ended))
	require.Equal(t, silence.StateExpired, ended.Status.State)
	// The expire woke replica three's dispatcher; each thread's first signal says it is
	// done (a pass commits a thread's frames and records together).
	for customer := range customers {
		firstSignalAs(t, one, "dev-only-coder-token", "/v1/agents/coder/threads/billing/"+customer+"/stream")
	}
	for _, m := range replicas {
		_, err := m.Dispatcher.RunOnce(ctx)
		require.NoError(t, err)
	}
	for customer, count := range customers {
		k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: customer}
		frames, err := framesStore.FramesAfter(ctx, k, 0, 100)
		require.NoError(t, err)
		var signals []agent.Frame
		for _, f := range frames {
			if f.Event == agent.EventSignal {
				signals = append(signals, f)
			}
		}
		require.Len(t, signals, 1, "%s: one signal for what accumulated", customer)
		recs, err := store.NewRecords(one.Store).ThreadRecords(ctx, k)
		require.NoError(t, err)
		require.Len(t, recs, count, "nothing lost")
		for _, r := range recs {
			require.Empty(t, r.HeldBy)
			if count > 1 {
				require.Equal(t, agent.TagNotificationSummary, signals[0].Signal.TagName, customer)
				require.Equal(t, signals[0].Signal.ID, r.SummarySignal, "%s: in the one summary", customer)
			} else {
				require.Equal(t, inbox.StatusDelivered, r.Status, "%s: alone, its own notification", customer)
			}
		}
	}
}
