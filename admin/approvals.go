package admin

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/approval"
)

var approvalParams = []string{"agent", "resource", "thread", "tool", "status", "limit", "cursor"}

// ApprovalPage is one page of GET /approvals.
type ApprovalPage struct {
	Approvals  []approval.Approval `json:"approvals"`
	NextCursor string              `json:"nextCursor,omitempty"`
}

// Approvals lists tool approvals newest first, pending and decided, with GET
// /approvals' query parameters; a bad parameter is a 400 naming it.
func (a *API) Approvals(ctx context.Context, q url.Values) (ApprovalPage, error) {
	p := readParams(q, approvalParams...)
	f := approval.Filter{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
		Tool: p.text("tool"), Status: approvalStatuses(p, "status"), Limit: p.limit(), Cursor: p.cursor()}
	if p.err != nil {
		return ApprovalPage{}, p.err
	}
	out, next, err := a.d.Store.ListApprovals(ctx, f)
	if err != nil {
		return ApprovalPage{}, err
	}
	if out == nil {
		out = []approval.Approval{}
	}
	return ApprovalPage{Approvals: out, NextCursor: next}, nil
}

// listApprovals is GET /approvals.
func (a *API) listApprovals(c echo.Context) error {
	page, err := a.Approvals(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (a *API) getApproval(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	out, err := a.d.Store.GetApproval(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "approval", id)
	}
	return c.JSON(http.StatusOK, out)
}

func approvalStatuses(p *params, name string) []approval.Status {
	return statusList(p, name, approval.Status.Valid, "pending, approved, declined, expired, answered")
}
