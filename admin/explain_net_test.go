package admin_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

func invoiceState(status string) map[string]any {
	return map[string]any{"kind": "invoice-status", "summary": "Invoice 42 is " + status,
		"attributes": map[string]any{"customer": "acme"}, "netKey": "invoice:42", "state": status, "restState": "paid"}
}

// Explain shows a notification's lane and the net-state verdict it would get: which
// pending record it supersedes, and whether its state is news.
func TestExplainShowsNetState(t *testing.T) {
	en := newEnv(t, envOpts{})
	records := store.NewRecords(en.st)
	explain := func(body map[string]any) admin.Outcome {
		var x admin.Explanation
		en.call(http.MethodPost, "/admin/v1/explain", map[string]any{"source": "generic", "connector": "billing", "body": body}, &x)
		require.Len(t, x.Items, 1)
		require.Equal(t, "invoice:42", x.Items[0].NetKey)
		require.Len(t, x.Notifications, 1)
		return x.Notifications[0]
	}

	o := explain(invoiceState("paid"))
	require.NotNil(t, o.Net)
	require.True(t, o.Net.Unchanged)
	require.Equal(t, "net state unchanged: paid", o.Net.Reason)
	require.Equal(t, inbox.StatusSuperseded, o.Record.Status, "the rest state with nothing told reaches nothing")

	en.deliver("d1", invoiceState("overdue"))
	recs, err := records.ThreadRecords(t.Context(), inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}, inbox.StatusPending)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	pending := recs[0].ID
	before := snapshot(t, en)
	o = explain(invoiceState("paid"))
	require.Equal(t, []string{pending}, o.Net.Supersedes)
	require.Equal(t, 2, o.Net.CoalescedCount)
	require.True(t, o.Net.Unchanged, "the overdue record was never told")
	require.Nil(t, o.Merge, "a lane never merges")
	require.Equal(t, before, snapshot(t, en), "explain writes nothing")

	require.NoError(t, records.MarkSeen(t.Context(), []string{pending}, t0))
	o = explain(invoiceState("paid"))
	require.False(t, o.Net.Unchanged)
	require.True(t, o.Net.HasTold)
	require.Equal(t, "overdue", o.Net.Told)
	require.Equal(t, "net state changed: overdue (last told) → paid", o.Net.Reason)
	require.Equal(t, inbox.StatusPending, o.Record.Status)
}
