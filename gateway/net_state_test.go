package gateway

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// A route puts generic invoice events in a net-state lane by template; `gateway explain`
// shows the lane and the verdict, and the real webhook path follows it.
func TestNetStateRouteAndExplain(t *testing.T) {
	dir := t.TempDir()
	m, cfgPath := startMainAt(t, dir, `
connectors:
  generic: [ { name: billing, secret: "`+billingSecret+`" } ]
routes:
  - name: invoices
    match: { source: generic, kind: invoice-status }
    thread: { agent: coder, resource: billing, thread: '{{index .Extra "customer"}}' }
    net_key: 'invoice:{{index .Extra "invoice"}}'
    state: '{{index .Extra "status"}}'
    rest_state: paid
`)
	records := store.NewRecords(m.Store)
	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}
	body := func(status string) []byte {
		// Low: held for a summary, so the record stays pending whatever the dispatcher does.
		return []byte(`{"kind":"invoice-status","summary":"Invoice 42 is ` + status + `","priority":"low",` +
			`"attributes":{"customer":"acme","invoice":"42","status":"` + status + `"}}`)
	}
	code, out := postGeneric(t, m, "msg_1", body("overdue"), true)
	require.Equal(t, http.StatusOK, code, out)
	recs, err := records.ThreadRecords(context.Background(), k)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	overdue := recs[0]
	require.Equal(t, "invoice:42", overdue.NetKey)
	require.Equal(t, "overdue", overdue.State)
	require.Equal(t, "paid", overdue.RestState)

	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_2"},"body":`+string(body("paid"))+`}`), 0o600))
	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `  net state:  lane invoice:42, state "paid" (rest "paid", nothing told yet): net state unchanged: paid
  inbox:      creates a superseded record that reaches nothing, superseding pending `+overdue.ID+` (coalescedCount 2)
`)

	code, out = postGeneric(t, m, "msg_2", body("paid"), true)
	require.Equal(t, http.StatusOK, code, out)
	recs, err = records.ThreadRecords(context.Background(), k)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		require.Equal(t, inbox.StatusSuperseded, r.Status, r.Summary)
	}
	require.Equal(t, "net state unchanged: paid", recs[1].Reason)
}
