package console

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/approval"
)

type approvalsPage struct {
	Q         url.Values
	Agents    []string
	Approvals []approval.Approval
	Next      string
}

func (approvalsPage) title() (string, string) { return "Approvals", "approvals" }

// approvals lists tool approvals, pending and decided (GET /admin/v1/approvals).
func (c *Console) approvals(ec echo.Context) error {
	q := cleanQuery(ec.QueryParams())
	page, err := c.d.Admin.Approvals(ec.Request().Context(), q)
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "approvals", approvalsPage{Q: q, Agents: c.d.Agents, Approvals: page.Approvals, Next: page.NextCursor})
}
