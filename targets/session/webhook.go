package session

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// MaxWebhookBody bounds a session webhook's body (the events carry ids only).
const MaxWebhookBody = 64 << 10

// WebhookPath is where kind's agent takes its session webhooks:
// POST /targets/{kind}/{agent}/webhook.
func WebhookPath(kind, agentID string) string { return "/targets/" + kind + "/" + agentID + "/webhook" }

// EventParser reads a verified webhook body: the session it is about and whether it
// says anything of presence (other event types are acknowledged and dropped).
type EventParser func(body []byte) (sessionID string, relevant bool, err error)

// parseKey decodes a whsec_ webhook secret.
func parseKey(s string) ([]byte, error) {
	if !strings.HasPrefix(s, stdwebhooks.SecretPrefix) {
		return nil, errors.New("want the whsec_… secret exactly as the platform shows it")
	}
	return stdwebhooks.ParseSecret(s)
}

// Mount serves the agent's webhook endpoint, parse reading its kind's events; every
// agent of the kind shares the route (httptarget.MountAgent).
func (h *Hosted) Mount(e *echo.Echo, parse EventParser) {
	httptarget.MountAgent(e, http.MethodPost, "/targets/"+h.kind+"/:agent/webhook", h.agentID,
		func(c echo.Context) error { return h.serveWebhook(c, parse) })
}

// serveWebhook verifies a session webhook as the vendor's library would (401 for any
// failure, without saying which), finds the thread of its session and reconciles it.
// A session the gateway did not create is acknowledged and ignored.
func (h *Hosted) serveWebhook(c echo.Context, parse EventParser) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxWebhookBody+1))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "unreadable body")
	}
	if len(body) > MaxWebhookBody {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "webhook body over 64 KiB")
	}
	if err := Verify(h.dialect, h.key, c.Request().Header, body, h.now()); err != nil {
		return echo.NewHTTPError(http.StatusUnauthorized, "bad webhook signature")
	}
	id, relevant, err := parse(body)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "webhook body: "+err.Error())
	}
	if !relevant {
		return c.NoContent(http.StatusNoContent)
	}
	ctx := context.WithoutCancel(c.Request().Context())
	ts, ok, err := h.sessions.SessionThread(ctx, h.agentID, id)
	if err != nil {
		h.log.Error("find the session's thread", "session_id", id, "error", err.Error())
		return echo.NewHTTPError(http.StatusServiceUnavailable, "try again")
	}
	if !ok {
		h.log.Debug("webhook of a session the gateway did not create; ignored", "session_id", id)
		return c.NoContent(http.StatusNoContent)
	}
	h.Reconcile(ctx, ts.Thread, true)
	return c.NoContent(http.StatusNoContent)
}
