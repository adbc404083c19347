package admin

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/approval"
)

var approvalParams = []string{"agent", "resource", "thread", "tool", "status", "limit", "cursor"}

type approvalList struct {
	Approvals  []approval.Approval `json:"approvals"`
	NextCursor string              `json:"nextCursor,omitempty"`
}

// listApprovals is GET /approvals: tool approvals newest first, pending and decided.
func (a *API) listApprovals(c echo.Context) error {
	p := readParams(c.QueryParams(), approvalParams...)
	f := approval.Filter{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
		Tool: p.text("tool"), Status: approvalStatuses(p, "status"), Limit: p.limit(), Cursor: p.cursor()}
	if p.err != nil {
		return p.err
	}
	out, next, err := a.d.Store.ListApprovals(c.Request().Context(), f)
	if err != nil {
		return err
	}
	if out == nil {
		out = []approval.Approval{}
	}
	return c.JSON(http.StatusOK, approvalList{Approvals: out, NextCursor: next})
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
	raw := p.vals[name]
	if raw == "" {
		return nil
	}
	var out []approval.Status
	for _, s := range strings.Split(raw, ",") {
		st := approval.Status(strings.TrimSpace(s))
		if !st.Valid() {
			p.fail("%s: unknown %q (want a comma list of pending, approved, declined, expired)", name, st)
			return nil
		}
		out = append(out, st)
	}
	return out
}
