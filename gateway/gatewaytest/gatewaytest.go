// Package gatewaytest has what the tests of the gateway, its command line and its main
// share: the shipped config.yaml as committed, a config serving on a free loopback port,
// a signed generic delivery, and a buffer a child process writes while the test reads it.
package gatewaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// BillingSecret is the Standard Webhooks secret of the tests' generic connector billing.
const BillingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// WriteConfig writes dir/config.yaml: a gateway serving on a free loopback port with
// SQLite under dir/data, one agent (coder, token dev-only-coder-token), and extra.
func WriteConfig(t testing.TB, dir, extra string) string {
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

// PostGeneric posts body to the generic connector billing at addr (host:port) as its
// sender would, signed with BillingSecret (or with a wrong signature when sign is
// false), with extra headers, and returns the status and the decoded JSON answer.
func PostGeneric(t testing.TB, addr, id string, body []byte, sign bool, extra http.Header) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhooks/generic/billing", bytes.NewReader(body))
	require.NoError(t, err)
	secret, err := stdwebhooks.ParseSecret(BillingSecret)
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

// LockedBuffer is an io.Writer a child process's output goes to while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
