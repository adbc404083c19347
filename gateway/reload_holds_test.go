package gateway

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// TestReloadBringsTimeIntervalsAndSilenceLimits: a reload that adds a time interval and
// a rule muting by it holds the next matching record (the policy of the new file carries
// its intervals), and a new silences.max_duration bounds the next silence.
func TestReloadBringsTimeIntervalsAndSilenceLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", ""))
	m := startReloadable(t, path)

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", `
time_intervals:
  - name: always
    time_intervals: [ { times: [ { start_time: "00:00", end_time: "24:00" } ] } ]
policy:
  rules: [ { match: { kind: invoice-failed }, mute_time_intervals: [always] } ]
silences: { max_duration: 1h }`))
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)

	require.Equal(t, http.StatusOK, postSigned(t, m, billingSecret, "msg_muted", []byte(`{"kind":"invoice-failed","summary":"muted"}`)))
	rs, _, err := store.NewAdmin(m.Store).ListRecords(context.Background(), inbox.RecordFilter{Agent: "coder", Resource: "billing", Thread: "invoices"})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, inbox.StatusPending, rs[0].Status)
	require.Equal(t, "mute:always", rs[0].HeldBy, rs[0].Reason)

	now := time.Now().UTC()
	silence := func(d time.Duration) []byte {
		return []byte(`{"matchers":[{"name":"source","value":"generic"}],"endsAt":"` + now.Add(d).Format(time.RFC3339) +
			`","createdBy":"ops","comment":"maintenance"}`)
	}
	var out struct {
		Error struct{ Message string } `json:"error"`
	}
	require.Equal(t, http.StatusBadRequest, getJSON(t, m, http.MethodPost, "/admin/v1/silences", reloadOpsToken, silence(2*time.Hour), &out))
	require.Contains(t, out.Error.Message, "silences.max_duration (1h)")
	require.Equal(t, http.StatusCreated, getJSON(t, m, http.MethodPost, "/admin/v1/silences", reloadOpsToken, silence(30*time.Minute), &out), out)
}
