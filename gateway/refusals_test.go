package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
)

const refusalsAdmin = "refusals-admin-token-0123"

// refusalsGet does an admin API GET and decodes a 200 answer into out.
func refusalsGet(t *testing.T, m *Gateway, path string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+m.Addr().String()+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+refusalsAdmin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	require.NoError(t, json.Unmarshal(raw, out), string(raw))
}

// TestRefusalsThroughTheAdminAPI: a running gateway keeps why it refused deliveries
// (a wrong secret, a clock out of the window, a body over the limit) and the admin API
// shows them, newest first, on the connector's own path and in the connectors list; a
// reload that keeps the connector keeps them.
func TestRefusalsThroughTheAdminAPI(t *testing.T) {
	dir := t.TempDir()
	m, path := startMainAt(t, dir, fmt.Sprintf(`
admin: { tokens: [ { name: ops, token: %q, scopes: [read] } ] }
`, refusalsAdmin)+billingConfig)
	m.ConfigPath, m.Lookup = path, noEnv

	code, _ := postGeneric(t, m, "msg_wrong_secret", []byte(`{"kind":"invoice-failed","summary":"s"}`), false)
	require.Equal(t, http.StatusUnauthorized, code)
	stale := http.Header{"Webhook-Timestamp": {strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)}}
	code, _ = postGenericSigned(t, m, "msg_stale", []byte(`{"kind":"invoice-failed","summary":"s"}`), true, stale)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = postGeneric(t, m, "msg_ok", []byte(`{"kind":"invoice-failed","summary":"s"}`), true)
	require.Equal(t, http.StatusOK, code)

	var one struct {
		Source string `json:"source"`
		Name   string `json:"name"`
		connectors.RefusalLog
	}
	refusalsGet(t, m, "/admin/v1/connectors/generic/billing/refusals", &one)
	require.Equal(t, "billing", one.Name)
	require.EqualValues(t, 2, one.Total)
	require.Len(t, one.Recent, 2)
	assert.Equal(t, string(connectors.ReasonTimestampWindow), one.Recent[0].Reason, "newest first")
	assert.Equal(t, string(connectors.ReasonNoV1Signature), one.Recent[1].Reason)
	for _, f := range one.Recent {
		assert.Equal(t, http.StatusUnauthorized, f.Status)
		assert.Equal(t, "127.0.0.1", f.RemoteAddr)
	}

	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(mustRead(t, path), "thread: invoices", "thread: ledger", 1)), 0o600))
	require.NoError(t, m.Reload(context.Background()))
	var list struct {
		Connectors []struct {
			Source   string                 `json:"source"`
			Name     string                 `json:"name"`
			Refusals *connectors.RefusalLog `json:"refusals"`
		} `json:"connectors"`
	}
	refusalsGet(t, m, "/admin/v1/connectors", &list)
	require.Len(t, list.Connectors, 1)
	require.NotNil(t, list.Connectors[0].Refusals)
	assert.Equal(t, one.RefusalLog, *list.Connectors[0].Refusals, "a reload keeps the refusals of the connectors it keeps")
}
