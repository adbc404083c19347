package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const billingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func startMain(t *testing.T, extra string) *Gateway {
	t.Helper()
	m, _ := startMainAt(t, t.TempDir(), extra)
	return m
}

// startMainAt runs a Gateway from a config written in dir and returns its config path.
func startMainAt(t *testing.T, dir, extra string) (*Gateway, string) {
	t.Helper()
	path := writeConfig(t, dir, extra)
	cfg, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m, path
}

const billingConfig = `
connectors:
  generic: [ { name: billing, secret: "` + billingSecret + `" } ]
routes:
  - name: billing
    match: { source: generic, connector: billing }
    thread: { agent: coder, resource: billing, thread: invoices }
`

func postGeneric(t *testing.T, m *Gateway, id string, body []byte, sign bool) (int, map[string]any) {
	t.Helper()
	return postGenericSigned(t, m, id, body, sign, nil)
}

// postGenericSigned is postGeneric with extra request headers.
func postGenericSigned(t *testing.T, m *Gateway, id string, body []byte, sign bool, extra http.Header) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+m.Addr().String()+"/webhooks/generic/billing", bytes.NewReader(body))
	require.NoError(t, err)
	secret, err := stdwebhooks.ParseSecret(billingSecret)
	require.NoError(t, err)
	ts := time.Now()
	sig := stdwebhooks.Sign(secret, id, ts, body)
	if !sign {
		sig = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	}
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range extra {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// firstSignal subscribes to a thread's stream and returns the first signal frame's data.
func firstSignal(t *testing.T, m *Gateway, path string) map[string]any {
	t.Helper()
	return firstSignalAs(t, m, "dev-only-coder-token", path)
}

// firstSignalAs is firstSignal with the agent's token.
func firstSignalAs(t *testing.T, m *Gateway, token, path string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait) // only bounds a broken test
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.Addr().String()+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "signal":
			var frame map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &frame))
			return frame
		}
	}
	t.Fatalf("stream ended without a signal: %v", sc.Err())
	return nil
}

func TestIngestEndToEnd(t *testing.T) {
	m := startMain(t, billingConfig)
	body := []byte(`{"kind":"invoice-failed","summary":"Invoice 42 for ACME failed to charge","priority":"high","dedupeKey":"inv-42"}`)

	code, out := postGeneric(t, m, "msg_1", body, true)
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, "routed", out["status"])
	require.Equal(t, false, out["duplicate"])

	code, out = postGeneric(t, m, "msg_1", body, true)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, true, out["duplicate"])

	code, out = postGeneric(t, m, "msg_2", body, false)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, map[string]any{"error": map[string]any{"code": "unauthorized", "message": "missing or invalid credentials"}}, out)

	// The idle thread is woken with the full notification.
	frame := firstSignal(t, m, "/v1/agents/coder/threads/billing/invoices/stream")
	require.Equal(t, "wake", frame["action"])
	require.Equal(t, "notification", frame["type"])
	recs, err := store.NewRecords(m.Store).ThreadRecords(context.Background(), inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "invoices"})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "Invoice 42 for ACME failed to charge", recs[0].Summary)
	require.Equal(t, inbox.PriorityHigh, recs[0].Priority)
	require.Equal(t, inbox.StatusDelivered, recs[0].Status)
	require.Contains(t, frame["xml"], `priority="high" status="delivered" verified_by="standard-webhooks">Invoice 42 for ACME failed to charge</notification>`)

	resp, err := http.Get("http://" + m.Addr().String() + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`signalgate_events_received_total{connector="billing",outcome="routed",source="generic"} 1`,
		`signalgate_events_received_total{connector="billing",outcome="duplicate",source="generic"} 1`,
		`signalgate_events_received_total{connector="billing",outcome="rejected",source="generic"} 1`,
		`signalgate_verification_failures_total{connector="billing",source="generic"} 1`,
		`signalgate_http_request_duration_seconds_count{code="401",method="POST",route="/webhooks/generic/:connector"} 1`,
		`signalgate_records_total{result="created",source="generic"} 1`,
		`signalgate_decisions_total{action="deliver"} 1`,
		`signalgate_queue_pending 0`,
		`signalgate_signals_sent_total{action="wake",target="stream"} 1`,
		`signalgate_delivery_attempts_total{outcome="delivered",target="stream"} 1`,
		`# TYPE signalgate_stream_subscribers gauge`,
		`signalgate_threads_active 1`,
	} {
		require.Contains(t, string(metrics), want)
	}
}
