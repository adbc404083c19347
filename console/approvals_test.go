package console

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
)

func TestApprovalsPage(t *testing.T) {
	f := newFixture(t, testTokens)
	ck := f.signIn(viewerToken)
	r := f.do(http.MethodGet, "/console/approvals", nil, ck, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `id="empty"`)
	require.Contains(t, r.body, `href="/console/approvals" aria-current="page"`)

	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	decided := at.Add(time.Minute)
	k := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	f.admin.approvals = []approval.Approval{
		{ID: "a-pending", ThreadKey: k, Origin: approval.OriginMastra, Tool: "deploy", Status: approval.StatusPending,
			Arguments: json.RawMessage(`{"env":"<script>alert(1)</script>"}`), CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour),
			PostError: "no approvals.channel is set"},
		{ID: "a-approved", ThreadKey: k, Origin: approval.OriginAPI, Tool: "rollback", Status: approval.StatusApproved,
			DecidedBy: "U0JANE", DecidedByName: "Jane", DecidedAt: &decided, Connector: "acme", Channel: "C1",
			MessageTS: "1700000000.000100", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)},
	}
	r = f.do(http.MethodGet, "/console/approvals?status=&tool=", nil, ck, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `data-id="a-pending" data-status="pending"`)
	require.Contains(t, r.body, `data-id="a-approved" data-status="approved"`)
	require.Contains(t, r.body, "Jane")
	require.Contains(t, r.body, "no approvals.channel is set")
	require.Contains(t, r.body, "&lt;script&gt;", "arguments are escaped")
	require.NotContains(t, r.body, "<script>alert(1)</script>")

	r = f.do(http.MethodGet, "/console/approvals?status=bogus", nil, ck, nil)
	require.Equal(t, http.StatusBadRequest, r.status)
}
