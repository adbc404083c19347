package agentapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// cancelMessages is POST …/messages/cancel (see agent.Service.CancelQueuedMessages): 200
// with {cancelledSignalIds}, which may be empty.
func (a *API) cancelMessages(c echo.Context, k inbox.ThreadKey) error {
	var req agent.CancelRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	res, err := a.svc.CancelQueuedMessages(c.Request().Context(), k, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
