package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
)

// Replies is the reply outbox (reply.Service).
type Replies interface {
	List(ctx context.Context, f reply.Filter) ([]reply.Reply, string, error)
	Lookup(ctx context.Context, id string) (reply.Reply, error)
	Retry(ctx context.Context, id string) (reply.Reply, error)
}

var replyParams = []string{"agent", "resource", "thread", "source", "connector", "status", "limit", "cursor"}

// AdminReply is a reply as the admin API shows it: with its thread.
type AdminReply struct {
	reply.Reply
	inbox.ThreadKey
}

// ReplyPage is one page of GET /replies.
type ReplyPage struct {
	Replies    []AdminReply `json:"replies"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

func adminReply(r reply.Reply) AdminReply { return AdminReply{Reply: r, ThreadKey: r.Thread} }

// Replies lists the outbox newest first with GET /replies' query parameters; a bad
// parameter is a 400 naming it.
func (a *API) Replies(ctx context.Context, q url.Values) (ReplyPage, error) {
	if a.d.Replies == nil {
		return ReplyPage{Replies: []AdminReply{}}, nil
	}
	p := readParams(q, replyParams...)
	f := reply.Filter{Agent: p.text("agent"), Resource: p.text("resource"), Thread: p.text("thread"),
		Source: p.text("source"), Connector: p.text("connector"),
		Status: statusList(p, "status", reply.Status.Valid, "queued, sent, failed, pending, declined"),
		Limit:  p.limit(), Cursor: p.cursor()}
	if p.err != nil {
		return ReplyPage{}, p.err
	}
	rs, next, err := a.d.Replies.List(ctx, f)
	if err != nil {
		return ReplyPage{}, err
	}
	out := make([]AdminReply, len(rs))
	for i, r := range rs {
		out[i] = adminReply(r)
	}
	return ReplyPage{Replies: out, NextCursor: next}, nil
}

func (a *API) listReplies(c echo.Context) error {
	page, err := a.Replies(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// replyID reads a reply id path parameter: the agent's id, not a UUID.
func replyID(c echo.Context) (string, error) {
	v, err := pathValue(c, "id")
	if err != nil {
		return "", err
	}
	if !reply.ValidID(v) {
		return "", server.BadRequest("id: %q is not a reply id (1-128 letters, digits, '.', '_', ':' and '-', starting with a letter or digit)", v)
	}
	return v, nil
}

func (a *API) getReply(c echo.Context) error {
	id, err := replyID(c)
	if err != nil {
		return err
	}
	if a.d.Replies == nil {
		return server.NotFound("reply %q not found", id)
	}
	r, err := a.d.Replies.Lookup(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "reply", id)
	}
	return c.JSON(http.StatusOK, adminReply(r))
}

// RetryReply queues a failed reply again (POST /replies/{id}/retry, the console).
func (a *API) RetryReply(ctx context.Context, id string) (AdminReply, error) {
	if a.d.Replies == nil {
		return AdminReply{}, server.NotFound("reply %q not found", id)
	}
	r, err := a.d.Replies.Retry(ctx, id)
	switch {
	case errors.Is(err, reply.ErrNotRetryable):
		return AdminReply{}, server.NewError(http.StatusConflict, "conflict", "%s", err.Error())
	case err != nil:
		return AdminReply{}, notFound(err, "reply", id)
	}
	return adminReply(r), nil
}

func (a *API) retryReply(c echo.Context) error {
	id, err := replyID(c)
	if err != nil {
		return err
	}
	r, err := a.RetryReply(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
