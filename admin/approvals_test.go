package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

type approvalPage struct {
	Approvals  []approval.Approval `json:"approvals"`
	NextCursor string              `json:"nextCursor"`
}

func TestListApprovals(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		approvals := store.NewApprovals(en.st)
		ctx := context.Background()
		k := inbox.ThreadKey{Agent: "support", Resource: "acme/api", Thread: "t1"}
		ids := map[string]string{"c1": "0193a7c0-0000-7000-8000-000000000001", "c2": "0193a7c0-0000-7000-8000-000000000002",
			"c3": "0193a7c0-0000-7000-8000-000000000003"}
		for i, call := range []string{"c1", "c2", "c3"} {
			at := t0.Add(time.Duration(i) * time.Second)
			_, _, err := approvals.CreateApproval(ctx, approval.Approval{ID: ids[call], ThreadKey: k, Origin: approval.OriginMastra,
				ToolCallID: call, Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), Status: approval.StatusPending,
				CreatedAt: at, ExpiresAt: at.Add(time.Hour), UpdatedAt: at})
			require.NoError(t, err)
		}
		_, _, err := approvals.DecideApproval(ctx, ids["c1"], approval.StatusApproved, "U0JANE", "Jane", t0)
		require.NoError(t, err)

		var page approvalPage
		en.call(http.MethodGet, "/admin/v1/approvals?limit=2", nil, &page)
		require.Len(t, page.Approvals, 2)
		require.Equal(t, ids["c3"], page.Approvals[0].ID)
		require.JSONEq(t, `{"env":"prod"}`, string(page.Approvals[0].Arguments))
		next := page.NextCursor
		page = approvalPage{}
		en.call(http.MethodGet, "/admin/v1/approvals?limit=2&cursor="+url.QueryEscape(next), nil, &page)
		require.Len(t, page.Approvals, 1)
		require.Empty(t, page.NextCursor)

		en.call(http.MethodGet, "/admin/v1/approvals?status=approved,declined&agent=support&tool=deploy", nil, &page)
		require.Len(t, page.Approvals, 1)
		require.Equal(t, "Jane", page.Approvals[0].DecidedByName)
		en.call(http.MethodGet, "/admin/v1/approvals?status=pending&thread=t1&resource=acme%2Fapi", nil, &page)
		require.Len(t, page.Approvals, 2)

		var one approval.Approval
		en.call(http.MethodGet, "/admin/v1/approvals/"+ids["c1"], nil, &one)
		require.Equal(t, approval.StatusApproved, one.Status)

		code, raw := en.do(http.MethodGet, "/admin/v1/approvals?status=maybe", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		_, msg := errorOf(t, raw)
		require.Contains(t, msg, `status: unknown "maybe"`)
		code, _ = en.do(http.MethodGet, "/admin/v1/approvals?cursor=junk", opsToken, nil)
		require.Equal(t, http.StatusBadRequest, code)
		code, _ = en.do(http.MethodGet, "/admin/v1/approvals/0193a7c0-0000-7000-8000-00000000ffff", opsToken, nil)
		require.Equal(t, http.StatusNotFound, code)
		code, _ = en.do(http.MethodGet, "/admin/v1/approvals", "", nil)
		require.Equal(t, http.StatusUnauthorized, code)
	})
}
