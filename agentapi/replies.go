package agentapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
)

// Replies is the reply outbox (reply.Service).
type Replies interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
	Get(ctx context.Context, k inbox.ThreadKey, id string) (reply.Reply, error)
}

// WithReplies serves …/replies from r; without it they answer 404.
func WithReplies(r Replies) Option { return func(a *API) { a.replies = r } }

// createReply is POST …/replies: 202 once the reply is on disk (the same id again
// answers the reply as it is now).
func (a *API) createReply(c echo.Context, k inbox.ThreadKey) error {
	if a.replies == nil {
		return server.NewError(http.StatusNotFound, "replies_disabled", "no connector of this gateway sends replies")
	}
	var req reply.Request
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	r, err := a.replies.Queue(c.Request().Context(), k, req)
	if err != nil {
		return replyError(err)
	}
	return c.JSON(http.StatusAccepted, r)
}

// getReply is GET …/replies/{id}.
func (a *API) getReply(c echo.Context, k inbox.ThreadKey) error {
	if a.replies == nil {
		return server.NewError(http.StatusNotFound, "replies_disabled", "no connector of this gateway sends replies")
	}
	id, err := pathParam(c, "id")
	if err != nil {
		return err
	}
	r, err := a.replies.Get(c.Request().Context(), k, id)
	if err != nil {
		return replyError(err)
	}
	return c.JSON(http.StatusOK, r)
}

// replyError is the HTTP answer to the outbox's refusals; the message is the domain's,
// which names the field or the missing key and never a secret.
func replyError(err error) error {
	code, ok := reply.Code(err)
	if !ok {
		return err
	}
	msg := err.Error()
	if code == "not_found" {
		msg = reply.NotFoundMessage
	}
	return server.NewError(replyStatus(code), code, "%s", msg)
}

// replyStatus is the HTTP status of a reply.Code.
func replyStatus(code string) int {
	switch code {
	case "invalid_request", "unknown_reply_to", "unknown_resource":
		return http.StatusBadRequest
	case "forbidden":
		return http.StatusForbidden // watch: true where the agent may not watch
	case "too_long":
		return http.StatusRequestEntityTooLarge
	case "not_found":
		return http.StatusNotFound
	}
	return http.StatusConflict // no_credentials, conflict, no_approvers
}
