package a2a

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// HeaderToken carries the token a push notification was registered with.
const HeaderToken = "X-A2A-Notification-Token"

// pushRoute is PushPath as the router matches it: every a2a agent's.
const pushRoute = pathPrefix + ":agent" + pushPath

// Mount serves the agent's push notifications at POST /targets/a2a/{agent}/push: one
// route for every a2a agent, each agent's tasks taking its own requests.
func (t *Tasks) Mount(e *echo.Echo) {
	httptarget.MountAgent(e, http.MethodPost, pushRoute, t.cfg.Agent, t.push)
}

// push applies one push notification: a task event (v1.0's statusUpdate, artifactUpdate,
// task or message; v0.3's whole task) of a context the gateway opened a task in,
// carrying that task's token. 204 once applied; 400 for a body that is no task event
// (naming what is missing), 401 for a missing or wrong token (or a context the gateway
// has no task in: the answer does not say which), 404 for a task the context's record
// does not name (an earlier task, another client's), 413 over 4 MiB.
func (t *Tasks) push(c echo.Context) error {
	err := t.pushed(c)
	status := http.StatusNoContent
	if err != nil {
		status = server.StatusOf(err)
	}
	t.TestSignals.Pushed.Signal(status)
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (t *Tasks) pushed(c echo.Context) error {
	req := c.Request()
	raw, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, maxPushBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return server.NewError(http.StatusRequestEntityTooLarge, "payload_too_large", "a push notification is at most 4 MiB")
		}
		return server.BadRequest("unreadable body")
	}
	s, err := pushEvent(raw)
	if err != nil {
		return server.BadRequest("%s", err.Error())
	}
	token := req.Header.Get(HeaderToken)
	if token == "" {
		return server.Unauthorized()
	}
	ctx := req.Context()
	rec, ok, err := t.states.load(ctx, s.ContextID)
	if err != nil {
		return server.NewError(http.StatusServiceUnavailable, "unavailable", "the task record cannot be read now")
	}
	if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(rec.Token)) != 1 {
		return server.Unauthorized()
	}
	switch {
	case rec.TaskID == "":
		// Before the send's answer was read: the token is this send's alone, so the task
		// it names is the one the send opened.
		rec.TaskID, rec.Sending = s.TaskID, ""
	case rec.TaskID != s.TaskID:
		return server.NotFound("task %s is not the task this context's record names", s.TaskID)
	}
	k := inbox.ThreadKey{Agent: t.cfg.Agent, Resource: rec.Resource, Thread: rec.Thread}
	t.observe(ctx, k, rec, s, "push")
	return nil
}
