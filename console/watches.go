package console

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

// How many of a thread's watches its page lists: the live ones (an agent rarely holds
// more on one thread) and the most recently ended.
const (
	liveWatchesShown  = 50
	endedWatchesShown = 10
)

// threadWatches fills p with k's live and recently ended watches, whatever the records'
// filters say.
func (c *Console) threadWatches(ctx context.Context, k inbox.ThreadKey, p *threadPage) error {
	q := func(st watch.Status, n int) url.Values {
		return url.Values{"agent": {k.Agent}, "resourceId": {k.Resource}, "threadId": {k.Thread},
			"status": {string(st)}, "limit": {itoa(n)}}
	}
	live, err := c.d.Admin.Watches(ctx, q(watch.StatusLive, liveWatchesShown))
	if err != nil {
		return err
	}
	ended, err := c.d.Admin.Watches(ctx, q(watch.StatusEnded, endedWatchesShown))
	if err != nil {
		return err
	}
	p.Watches, p.MoreWatches = live.Watches, live.NextCursor != ""
	p.EndedWatches, p.MoreEndedWatches = ended.Watches, ended.NextCursor != ""
	return nil
}

// endWatch ends a watch for the signed-in operator (DELETE /admin/v1/watches/{id}): its
// thread is told once.
func (c *Console) endWatch(ec echo.Context) error {
	if _, err := c.d.Admin.EndWatch(ec.Request().Context(), ec.Param("id"), sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}
