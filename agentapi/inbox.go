package agentapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// createNotification is POST …/notifications (see agent.Service.CreateNotification):
// 201 when a new record was made. A JSON array creates up to 100 at once
// (agent.Service.CreateNotifications), answered as an array in input order: 201 when
// any new record was made.
func (a *API) createNotification(c echo.Context, k inbox.ThreadKey) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	key := c.Request().Header.Get("Idempotency-Key")
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		out, err := a.svc.CreateNotifications(c.Request().Context(), k, body, key)
		if err != nil {
			return err
		}
		status := http.StatusOK
		for _, r := range out {
			if r.Created {
				status = http.StatusCreated
			}
		}
		return c.JSON(status, out)
	}
	res, err := a.svc.CreateNotification(c.Request().Context(), k, body, key)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, res)
}

// listNotifications is GET …/notifications (see agent.Service.ListInbox). markSeen=false, which older
// clients send to only look, is accepted; markSeen=true is refused, so a client relying
// on the old side effect learns it is gone.
func (a *API) listNotifications(c echo.Context, k inbox.ThreadKey) error {
	p := agent.ListParams{Status: c.QueryParam("status"), Search: c.QueryParam("q"), Cursor: c.QueryParam("cursor"),
		Sources: commaList(c.QueryParam("source")), Kinds: commaList(c.QueryParam("kind"))}
	if raw := c.QueryParam("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > agent.MaxListLimit {
			return server.BadRequest("limit: want 1 to %d, got %q", agent.MaxListLimit, raw)
		}
		p.Limit = n
	}
	if raw := c.QueryParam("markSeen"); raw != "" {
		if v, err := strconv.ParseBool(raw); err != nil || v {
			return server.BadRequest("markSeen: listing never marks records seen (only false is accepted, got %q): "+
				"POST …/notifications/read or …/notifications/{id}/seen moves them", raw)
		}
	}
	page, err := a.svc.ListInbox(c.Request().Context(), k, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func commaList(raw string) []string {
	if raw == "" {
		return nil
	}
	out := strings.Split(raw, ",")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// readNotifications is POST …/notifications/read (see agent.Service.ReadInbox).
func (a *API) readNotifications(c echo.Context, k inbox.ThreadKey) error {
	var req struct {
		IDs []string `json:"ids"`
	}
	if err := decodeBody(c, &req, true); err != nil {
		return err
	}
	out, err := a.svc.ReadInbox(c.Request().Context(), k, req.IDs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"notifications": out})
}

func (a *API) getNotification(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	rec, err := a.svc.GetNotification(c.Request().Context(), k, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// actOnNotification is POST …/notifications/{id}/{seen|dismiss|archive} (see agent.Service.ActOn).
func (a *API) actOnNotification(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathParam(c, "id")
	if err != nil {
		return err
	}
	action, err := pathParam(c, "action")
	if err != nil {
		return err
	}
	rec, err := a.svc.ActOn(c.Request().Context(), k, id, action)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// snoozeNotification is POST …/notifications/{id}/snooze {until} (see agent.Service.Snooze).
func (a *API) snoozeNotification(c echo.Context, k inbox.ThreadKey) error {
	id, err := pathParam(c, "id")
	if err != nil {
		return err
	}
	var req struct {
		Until string `json:"until"`
	}
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	rec, err := a.svc.Snooze(c.Request().Context(), k, id, req.Until)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}
