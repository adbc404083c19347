package admin

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/watch"
)

// WatchReader reads watches (the watch store).
type WatchReader interface {
	Watch(ctx context.Context, id string) (watch.Watch, error)
	ListWatches(ctx context.Context, f watch.Filter) (watch.Page, error)
}

// WatchEnder ends a watch and tells its thread with one watch-ended notification
// (watch.Service). ended is false, and w the watch as it is, when it had ended already;
// inbox.ErrNotFound when there is none.
type WatchEnder interface {
	End(ctx context.Context, id, reason string) (w watch.Watch, ended bool, err error)
}

var watchParams = []string{"agent", "resourceId", "threadId", "source", "connector", "resource", "status", "limit", "cursor"}

// defaultWatchPage is a listing's size when limit is not given (as the other lists).
const defaultWatchPage = 50

// AdminWatch is a watch as the admin API shows it: with its thread. Both carry a
// Resource (the watched one and the thread's resourceId): name Watch.Resource or
// ThreadKey.Resource.
type AdminWatch struct {
	watch.Watch
	inbox.ThreadKey
}

// WatchPage is one page of GET /watches.
type WatchPage struct {
	Watches    []AdminWatch `json:"watches"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

func adminWatch(w watch.Watch) AdminWatch { return AdminWatch{Watch: w, ThreadKey: w.Thread} }

// watchIDPattern admits the ids watches carry ("w-" and a UUID) and any other plain id,
// so a malformed one is a 400 and an unknown one a 404.
var watchIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

func checkWatchID(name, v string) (string, error) {
	if !watchIDPattern.MatchString(v) {
		return "", server.BadRequest("%s: %q is not a watch id (like w-0190c1d2-…)", name, v)
	}
	return v, nil
}

// Watches lists watches newest first with GET /watches' query parameters; a bad
// parameter is a 400 naming it.
func (a *API) Watches(ctx context.Context, q url.Values) (WatchPage, error) {
	p := readParams(q, watchParams...)
	f := watch.Filter{Agent: p.text("agent"), Source: p.text("source"), Connector: p.text("connector"),
		Resource: p.text("resource"), Limit: p.limit()}
	if f.Limit == 0 {
		f.Limit = defaultWatchPage
	}
	// A resource or thread id means nothing without the rest of the thread's key.
	res, thr := p.text("resourceId"), p.text("threadId")
	switch {
	case res == "" && thr == "":
	case f.Agent == "" || res == "" || thr == "":
		p.fail("resourceId and threadId name one thread: give them together with agent")
	default:
		f.Thread = &inbox.ThreadKey{Agent: f.Agent, Resource: res, Thread: thr}
	}
	switch st := p.vals["status"]; st {
	case "", string(watch.StatusLive):
		f.Status = watch.StatusLive
	case string(watch.StatusEnded):
		f.Status = watch.StatusEnded
	case "all":
	default:
		p.fail("status: unknown %q (want live, ended or all)", st)
	}
	if c := p.vals["cursor"]; c != "" {
		var err error
		if f.Cursor, err = checkWatchID("cursor", c); err != nil {
			p.fail("cursor: not a cursor this API returned")
		}
	}
	if p.err != nil {
		return WatchPage{}, p.err
	}
	if a.d.Watches == nil {
		return WatchPage{Watches: []AdminWatch{}}, nil
	}
	page, err := a.d.Watches.ListWatches(ctx, f)
	if err != nil {
		return WatchPage{}, err
	}
	out := make([]AdminWatch, len(page.Watches))
	for i, w := range page.Watches {
		out[i] = adminWatch(w)
	}
	return WatchPage{Watches: out, NextCursor: page.Next}, nil
}

func (a *API) listWatches(c echo.Context) error {
	page, err := a.Watches(c.Request().Context(), c.QueryParams())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (a *API) getWatch(c echo.Context) error {
	id, err := pathValue(c, "id")
	if err != nil {
		return err
	}
	if id, err = checkWatchID("id", id); err != nil {
		return err
	}
	if a.d.Watches == nil {
		return server.NotFound("watch %q not found", id)
	}
	w, err := a.d.Watches.Watch(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "watch", id)
	}
	return c.JSON(http.StatusOK, adminWatch(w))
}

// EndWatch ends a watch for an operator (DELETE /watches/{id}, the console): its thread
// hears of it once. A watch that had ended already is answered as it is.
func (a *API) EndWatch(ctx context.Context, id, by string) (AdminWatch, error) {
	id, err := checkWatchID("id", id)
	if err != nil {
		return AdminWatch{}, err
	}
	if a.d.WatchEnder == nil {
		return AdminWatch{}, server.NotFound("watch %q not found", id)
	}
	w, ended, err := a.d.WatchEnder.End(ctx, id, watch.EndOperator)
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		return AdminWatch{}, notFound(err, "watch", id)
	case err != nil:
		return AdminWatch{}, err
	}
	if ended {
		a.log.InfoContext(ctx, "watch ended by operator", slog.String("watch", id), slog.String("operator", by),
			slog.String("agent", w.Thread.Agent), slog.String("source", w.Source), slog.String("connector", w.Connector))
	}
	return adminWatch(w), nil
}

func (a *API) deleteWatch(c echo.Context) error {
	id, err := pathValue(c, "id")
	if err != nil {
		return err
	}
	w, err := a.EndWatch(c.Request().Context(), id, tokenName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, w)
}
