package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server/servertest"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const hostileAdminToken = "hostile-admin-token-0123456789"

// startOn starts the gateway on one store backend with the billing connector and an
// admin token.
func startOn(t *testing.T, b storetest.Backend) *Gateway {
	t.Helper()
	return startWithServer(t, b, "")
}

// startWithServer is startOn with more keys of the server section ("key: value, ...").
func startWithServer(t *testing.T, b storetest.Backend, server string) *Gateway {
	t.Helper()
	if server != "" {
		server = ", " + server
	}
	conf := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s%s }
storage: { driver: %s, dsn: %q }
log: { level: warn }
admin: { tokens: [ { name: ops, token: %q, scopes: [read, write] } ] }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, server, b.Config.Driver, b.Config.DSN, hostileAdminToken, billingConfig)
	cfg, err := ParseConfig("hostile.yaml", []byte(conf), noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// randomText is n bytes that do not compress, as an attacker would send: PostgreSQL
// compresses a repetitive value enough to fit a B-tree entry.
func randomText(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// getJSON calls the gateway and requires an answer that is valid UTF-8 JSON.
func getJSON(t *testing.T, m *Gateway, method, path, token string, body []byte, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+m.Addr().String()+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.True(t, utf8.Valid(raw), "%s %s answered invalid UTF-8: %q", method, path, raw)
	require.True(t, json.Valid(raw), "%s %s answered invalid JSON: %q", method, path, raw)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out))
	}
	return resp.StatusCode
}

// TestOverlongKeysIndexedBounded plays a sender with 6 KB ids and keys: on PostgreSQL they
// used to fail the B-tree insert (500, forever). They are stored (hashed where indexed)
// and a redelivery is still a duplicate.
func TestOverlongKeysIndexedBounded(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			m := startOn(t, b)
			id := randomText(6000)
			body, err := json.Marshal(map[string]any{"kind": "invoice-failed", "summary": "Invoice 42 failed",
				"dedupeKey": randomText(6000), "coalesceKey": randomText(6000)})
			require.NoError(t, err)
			code, out := postGeneric(t, m, id, body, true)
			require.Equal(t, http.StatusOK, code, out)
			require.Equal(t, "routed", out["status"])
			code, out = postGeneric(t, m, id, body, true)
			require.Equal(t, http.StatusOK, code, out)
			require.Equal(t, true, out["duplicate"], "the same long id is still a redelivery")

			// The same long keys under a new delivery id (the store suite shows they merge).
			code, out = postGeneric(t, m, "msg_2", body, true)
			require.Equal(t, http.StatusOK, code, out)
			recs, err := store.NewRecords(m.Store).ThreadRecords(context.Background(), inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "invoices"})
			require.NoError(t, err)
			require.NotEmpty(t, recs)
			for _, r := range recs {
				require.LessOrEqual(t, len(r.DedupeKey), inbox.MaxKeyBytes)
				require.LessOrEqual(t, len(r.CoalesceKey), inbox.MaxKeyBytes)
			}

			// The agent API: a long dedupeKey and a long source or kind.
			path := "/v1/agents/coder/threads/r/t/notifications"
			req, err := json.Marshal(map[string]any{"kind": "k", "summary": "s", "dedupeKey": randomText(6000)})
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, getJSON(t, m, http.MethodPost, path, "dev-only-coder-token", req, nil))
			req, err = json.Marshal(map[string]any{"kind": "k", "summary": "s", "source": randomText(6000)})
			require.NoError(t, err)
			var bad struct {
				Error struct{ Code, Message string }
			}
			require.Equal(t, http.StatusBadRequest, getJSON(t, m, http.MethodPost, path, "dev-only-coder-token", req, &bad))
			require.Contains(t, bad.Error.Message, "source")

			// A state signal's id names its lane, an index key too.
			sig, err := json.Marshal(map[string]any{"signal": map[string]any{"type": "state", "id": randomText(6000),
				"contents": "x", "mode": "snapshot"}})
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, getJSON(t, m, http.MethodPost, "/v1/agents/coder/threads/r/t/signals", "dev-only-coder-token", sig, &bad))
			require.Contains(t, bad.Error.Message, "signal.id")
		})
	}
}

// TestHostileTextThroughHTTP: invalid UTF-8 in a generic payload and NUL in an agent-API
// source used to be a permanent 500 on PostgreSQL and invalid JSON out of the admin API
// on SQLite. Both are stored cleaned and read back as valid JSON.
func TestHostileTextThroughHTTP(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			m := startOn(t, b)
			body := []byte("{\"kind\":\"invoice-failed\",\"summary\":\"bad \xff byte\",\"payload\":{\"note\":\"bad \xff\xfe byte\",\"nul\":\"a\\u0000b\"}}")
			code, out := postGeneric(t, m, "msg_ff", body, true)
			require.Equal(t, http.StatusOK, code, out)
			require.Equal(t, "routed", out["status"])

			path := "/v1/agents/coder/threads/r/t/notifications"
			code = getJSON(t, m, http.MethodPost, path, "dev-only-coder-token",
				[]byte(`{"source":"git\u0000hub","kind":"k\u0000","summary":"nul \u0000 here","dedupeKey":"d\u0000","metadata":{"x":"\u0000"}}`), nil)
			require.Equal(t, http.StatusCreated, code)

			var list struct{ Notifications []inbox.Record }
			require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/notifications", hostileAdminToken, nil, &list))
			require.Len(t, list.Notifications, 2)
			for _, r := range list.Notifications {
				require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/notifications/"+r.ID, hostileAdminToken, nil, nil))
				if r.Kind == "invoice-failed" {
					require.JSONEq(t, `{"note":"bad \ufffd byte","nul":"a\u0000b"}`, string(r.Payload))
				} else {
					require.Equal(t, "git\ufffdhub", r.Source)
				}
			}
			var events struct{ Events []inbox.Event }
			require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/events", hostileAdminToken, nil, &events))
			require.Len(t, events.Events, 2)
			for _, ev := range events.Events {
				require.Equal(t, http.StatusOK, getJSON(t, m, http.MethodGet, "/admin/v1/events/"+ev.ID, hostileAdminToken, nil, nil))
			}
			frame := firstSignal(t, m, "/v1/agents/coder/threads/billing/invoices/stream")
			require.Contains(t, frame["xml"], "bad \ufffd byte")
		})
	}
}

// TestBodiesCannotHoldConnections plays senders that trickle a body a byte at a time at
// every kind of route: each is answered and let go within server.body_timeout, while it
// still has most of its body unsent, and a length over server.body_limit is answered 413.
// A length just over the limit used to get no answer at all and keep its connection for
// as long as the sender kept sending.
func TestBodiesCannotHoldConnections(t *testing.T) {
	const limit = 64 << 10
	m := startWithServer(t, storetest.Backends(t)[0], "body_limit: 64KB, body_timeout: 200ms")
	agent := "Authorization: Bearer dev-only-coder-token\r\nContent-Type: application/json\r\n"
	routes := map[string]string{
		"webhook":            "POST /webhooks/generic/billing HTTP/1.1\r\nContent-Type: application/json\r\n",
		"agent API":          "POST /v1/agents/coder/threads/r/t/notifications HTTP/1.1\r\n" + agent,
		"MCP":                "POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n" + agent,
		"admin API":          "POST /admin/v1/explain HTTP/1.1\r\nAuthorization: Bearer " + hostileAdminToken + "\r\nContent-Type: application/json\r\n",
		"console":            "POST /console/signin HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n",
		"unknown path":       "POST /nope HTTP/1.1\r\n",
		"method not allowed": "PUT /webhooks/generic/billing HTTP/1.1\r\n",
	}
	for route, line := range routes {
		for name, a := range servertest.Attacks(limit) {
			t.Run(route+", "+name, func(t *testing.T) {
				ans := servertest.Trickle(t, m.Addr().String(), line+"Host: x\r\n"+a.Head, a.Body)
				require.Positive(t, ans.Unsent, "held until the whole body was sent")
				require.GreaterOrEqual(t, ans.Status, http.StatusBadRequest)
				if a.Over {
					require.Equal(t, http.StatusRequestEntityTooLarge, ans.Status)
				}
			})
		}
	}
}
