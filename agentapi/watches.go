package agentapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/watch"
)

// Watches is the watch service (watch.Service).
type Watches interface {
	Create(ctx context.Context, k inbox.ThreadKey, req watch.Request) (watch.Watch, bool, error)
	List(ctx context.Context, f watch.Filter) (watch.Page, error)
	Get(ctx context.Context, k inbox.ThreadKey, id string) (watch.Watch, error)
	Delete(ctx context.Context, k inbox.ThreadKey, id string) (watch.Watch, error)
}

// WithWatches serves …/watches from w; without it they answer 404.
func WithWatches(w Watches) Option { return func(a *API) { a.watches = w } }

// MaxWatchBody bounds a watch request's body: the largest valid one (a 512-byte
// resource, 20 kinds of 100 bytes) is far below it.
const MaxWatchBody = 16 << 10

// defaultWatchLimit is a listing's page without limit, as the inbox's.
const defaultWatchLimit = 50

// WatchPage is a page of a thread's watches, paged like the inbox.
type WatchPage struct {
	Watches    []watch.Watch `json:"watches"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

func (a *API) watchesOff() error {
	if a.watches == nil {
		return server.NewError(http.StatusNotFound, "watches_disabled", "this gateway does not serve watches")
	}
	return nil
}

// createWatch is POST …/watches: 201 with a new watch, 200 with the thread's live watch
// of the same source, connector and resource.
func (a *API) createWatch(c echo.Context, k inbox.ThreadKey) error {
	if err := a.watchesOff(); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxWatchBody+1))
	if err != nil {
		return err // the server's body limit's 413 passes through
	}
	if len(body) > MaxWatchBody {
		return server.NewError(http.StatusRequestEntityTooLarge, "too_large", "request body: at most %d bytes", MaxWatchBody)
	}
	var req watch.Request
	if err := agent.DecodeJSON(body, &req, false); err != nil {
		return err
	}
	w, created, err := a.watches.Create(c.Request().Context(), k, req)
	if err != nil {
		return watchError(err)
	}
	if created {
		return c.JSON(http.StatusCreated, w)
	}
	return c.JSON(http.StatusOK, w)
}

// listWatches is GET …/watches?status=live|ended|all&limit=&cursor=, newest first.
func (a *API) listWatches(c echo.Context, k inbox.ThreadKey) error {
	if err := a.watchesOff(); err != nil {
		return err
	}
	f, err := watchFilter(c, k)
	if err != nil {
		return err
	}
	page, err := a.watches.List(c.Request().Context(), f)
	if err != nil {
		return watchError(err)
	}
	out := WatchPage{Watches: page.Watches, NextCursor: page.Next}
	if out.Watches == nil {
		out.Watches = []watch.Watch{}
	}
	return c.JSON(http.StatusOK, out)
}

// watchFilter reads a listing's query: thread k's watches.
func watchFilter(c echo.Context, k inbox.ThreadKey) (watch.Filter, error) {
	f := watch.Filter{Thread: &k, Status: watch.StatusLive, Limit: defaultWatchLimit, Cursor: c.QueryParam("cursor")}
	switch s := c.QueryParam("status"); s {
	case "", string(watch.StatusLive):
	case string(watch.StatusEnded):
		f.Status = watch.StatusEnded
	case "all":
		f.Status = ""
	default:
		return f, server.BadRequest("status: want live, ended or all, got %q", s)
	}
	if raw := c.QueryParam("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > agent.MaxListLimit {
			return f, server.BadRequest("limit: want 1 to %d, got %q", agent.MaxListLimit, raw)
		}
		f.Limit = n
	}
	if f.Cursor != "" {
		if err := inbox.CheckID(f.Cursor); err != nil {
			return f, server.BadRequest("cursor: %v", err)
		}
	}
	return f, nil
}

// getWatch is GET …/watches/{id}.
func (a *API) getWatch(c echo.Context, k inbox.ThreadKey) error {
	if err := a.watchesOff(); err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	w, err := a.watches.Get(c.Request().Context(), k, id)
	if err != nil {
		return watchError(err)
	}
	return c.JSON(http.StatusOK, w)
}

// deleteWatch is DELETE …/watches/{id}: 200 with the ended watch (again: as it is).
func (a *API) deleteWatch(c echo.Context, k inbox.ThreadKey) error {
	if err := a.watchesOff(); err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	w, err := a.watches.Delete(c.Request().Context(), k, id)
	if err != nil {
		return watchError(err)
	}
	return c.JSON(http.StatusOK, w)
}

// watchError is the HTTP answer to the watch service's refusals; the message is the
// domain's, which names the field.
func watchError(err error) error {
	code, ok := watch.Code(err)
	if !ok {
		return fmt.Errorf("watches: %w", err)
	}
	return server.NewError(WatchStatus(code), code, "%s", watch.Message(err))
}

// WatchStatus is the HTTP status of a watch.Code.
func WatchStatus(code string) int {
	switch code {
	case "forbidden":
		return http.StatusForbidden
	case "too_many_watches":
		return http.StatusTooManyRequests
	case "not_found":
		return http.StatusNotFound
	}
	return http.StatusBadRequest // invalid_request, unknown_resource
}
