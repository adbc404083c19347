package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// A sender's customer name rendered into the thread id, through the real webhook path on
// each store. With a line break, the record lands on a thread the agent API can read (the
// line break is a space), not on one it refuses with 400 "contains control characters";
// too long for the agent API, the event is stored invalid naming the route, with no
// record.
func TestRoutedThreadIsReadable(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			cfg, err := ParseConfig("ids.yaml", []byte(fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 5s }
storage: { driver: %s, dsn: %q }
log: { level: warn }
agents: [ { id: coder, token: dev-only-coder-token } ]
connectors:
  generic: [ { name: billing, secret: %q } ]
routes:
  - name: customers
    match: { source: generic }
    thread: { agent: coder, resource: billing, thread: '{{index .Extra "customer"}}' }
`, b.Config.Driver, b.Config.DSN, billingSecret)), noEnv)
			require.NoError(t, err)
			m := New(cfg, storetest.Logger(t))
			require.NoError(t, m.Open(context.Background()))
			t.Cleanup(func() { require.NoError(t, m.Close()) })

			body := []byte(`{"kind":"invoice-failed","summary":"Invoice 9 failed","attributes":{"customer":"ACME Corp\nLondon office"}}`)
			code, out := postGeneric(t, m, "cust-1", body, true)
			require.Equal(t, http.StatusOK, code, out)
			require.Equal(t, "routed", out["status"])
			k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "ACME Corp London office"}
			recs, err := store.NewRecords(m.Store).ThreadRecords(context.Background(), k)
			require.NoError(t, err)
			require.Len(t, recs, 1)

			req, err := http.NewRequest(http.MethodGet, "http://"+m.Addr().String()+"/v1/agents/coder/threads/billing/"+
				url.PathEscape(k.Thread)+"/notifications", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer dev-only-coder-token")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var page struct {
				Notifications []struct {
					ID      string `json:"id"`
					Summary string `json:"summary"`
				} `json:"notifications"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
			require.Len(t, page.Notifications, 1)
			require.Equal(t, recs[0].ID, page.Notifications[0].ID)
			require.Equal(t, "Invoice 9 failed", page.Notifications[0].Summary)

			body = []byte(`{"kind":"invoice-failed","summary":"Invoice 10 failed","attributes":{"customer":"` + strings.Repeat("x", 513) + `"}}`)
			code, out = postGeneric(t, m, "cust-2", body, true)
			require.Equal(t, http.StatusAccepted, code, out)
			require.Equal(t, "invalid", out["status"])
			ev, err := store.NewExplain(m.Store).GetEvent(context.Background(), out["eventId"].(string))
			require.NoError(t, err)
			require.Equal(t, `notification 0: route "customers": thread.threadId: 513 bytes, over the limit of 512`, ev.Error)
		})
	}
}
