package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/gateway"
	"github.com/signalgate/signalgate/stdwebhooks"
)

const billingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// minimal is a config with one agent whose token is $CODER_TOKEN.
const minimal = `
agents:
  - id: coder
    token: "${CODER_TOKEN}"
`

func noEnv(string) (string, bool) { return "", false }

// env is a lookup of the variables kv names, in pairs.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// writeConfig writes a config serving on a free loopback port with SQLite under dir,
// one agent, and extra.
func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: sqlite, dsn: %q }
log: { level: debug, format: json }
agents: [ { id: coder, token: dev-only-coder-token } ]
%s`, filepath.Join(dir, "data", "gw.db"), extra)
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// postGeneric posts body to the gateway's generic connector billing, signed with its
// secret (or with a wrong signature), and returns the status and JSON answer.
func postGeneric(t *testing.T, m *gateway.Gateway, id string, body []byte, sign bool) (int, map[string]any) {
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
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}
