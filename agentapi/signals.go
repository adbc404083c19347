package agentapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// openRun is POST …/runs: 201 when a run was opened, 200 with the open one.
func (a *API) openRun(c echo.Context, k inbox.ThreadKey) error {
	var body struct{}
	if err := decodeBody(c, &body, true); err != nil {
		return err
	}
	run, created, err := a.svc.OpenRun(c.Request().Context(), k)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, run)
}

func (a *API) heartbeat(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathID(c, "runId")
	if err != nil {
		return err
	}
	run, err := a.svc.Heartbeat(c.Request().Context(), k, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, run)
}

func (a *API) finishRun(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathID(c, "runId")
	if err != nil {
		return err
	}
	var body agent.FinishRequest
	if err := decodeBody(c, &body, true); err != nil {
		return err
	}
	run, err := a.svc.Finish(c.Request().Context(), k, id, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, run)
}

// sendSignal is POST …/signals (see agent.Service.SendSignal).
func (a *API) sendSignal(c echo.Context, k inbox.ThreadKey) error {
	var req agent.SignalRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	res, err := a.svc.SendSignal(c.Request().Context(), k, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// requestApproval is POST …/approvals (see agent.Service.RequestApproval): 201 when the
// approval was created, 200 for a resend.
func (a *API) requestApproval(c echo.Context, k inbox.ThreadKey) error {
	// Refused before the body is read, so a caller learns approvals are off first.
	if err := a.svc.ApprovalsFor(k); err != nil {
		return err
	}
	var req agent.ApprovalRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	out, created, err := a.svc.RequestApproval(c.Request().Context(), k, req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, out)
}
