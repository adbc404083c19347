package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// logWindow is how much of a thread's log its page shows before following it live.
const logWindow = 200

// cleanQuery drops empty parameters (an empty filter field of a GET form means "any"),
// so what reaches the admin API, and what links carry, is only what was chosen.
func cleanQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if v != "" {
				out.Add(k, v)
			}
		}
	}
	return out
}

type threadsPage struct {
	Q       url.Values
	Agents  []string
	Threads []agent.Thread
	Next    string
}

func (threadsPage) title() (string, string) { return "Threads", "threads" }

func (c *Console) threads(ec echo.Context) error {
	q := cleanQuery(ec.QueryParams())
	page, err := c.d.Admin.Threads(ec.Request().Context(), q)
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "threads", threadsPage{Q: q, Agents: c.d.Agents, Threads: page.Threads, Next: page.NextCursor})
}

type threadPage struct {
	Key     inbox.ThreadKey
	Thread  *agent.Thread // nil: nothing has reached the thread yet
	Self    string
	Q       url.Values
	Records []inbox.Record
	Next    string
	Stream  string
	// Replies are the thread's newest answers (the admin API's GET /replies); MoreReplies
	// says the admin API has older ones.
	Replies     []admin.AdminReply
	MoreReplies bool
	// Watches are the thread's live watches and EndedWatches its most recently ended
	// ones (the admin API's GET /watches); More… say the admin API has further ones.
	Watches          []admin.AdminWatch
	MoreWatches      bool
	EndedWatches     []admin.AdminWatch
	MoreEndedWatches bool
	// Runtime is what the agent's runtime says of the thread now (a runtime that
	// reports its runs); RuntimeError why it could not be read.
	Runtime      *agent.RuntimeRun
	RuntimeError string
}

func (threadPage) title() (string, string) { return "Thread", "threads" }

func threadKeyOf(q url.Values) inbox.ThreadKey {
	return inbox.ThreadKey{Agent: q.Get("agent"), Resource: q.Get("resource"), Thread: q.Get("thread")}
}

func (c *Console) thread(ec echo.Context) error {
	ctx := ec.Request().Context()
	q := cleanQuery(ec.QueryParams())
	k := threadKeyOf(q)
	if k.Agent == "" || k.Resource == "" || k.Thread == "" {
		return c.fail(ec, http.StatusBadRequest, "A thread is named by agent, resource and thread: open one from the threads page.")
	}
	one := url.Values{"agent": {k.Agent}, "resource": {k.Resource}, "thread": {k.Thread}, "limit": {"1"}}
	threads, err := c.d.Admin.Threads(ctx, one)
	if err != nil {
		return c.failErr(ec, err)
	}
	recs, err := c.d.Admin.Notifications(ctx, q)
	if err != nil {
		return c.failErr(ec, err)
	}
	// The thread's replies, whatever the records' filters say.
	reps, err := c.d.Admin.Replies(ctx, url.Values{"agent": {k.Agent}, "resource": {k.Resource}, "thread": {k.Thread},
		"limit": {itoa(repliesShown)}})
	if err != nil {
		return c.failErr(ec, err)
	}
	p := threadPage{Key: k, Self: threadURL(k), Q: q, Records: recs.Notifications, Next: recs.NextCursor,
		Replies: reps.Replies, MoreReplies: reps.NextCursor != ""}
	if err := c.threadWatches(ctx, k, &p); err != nil {
		return c.failErr(ec, err)
	}
	c.threadRuntime(ctx, k, &p)
	var after int64
	if len(threads.Threads) > 0 {
		p.Thread = &threads.Threads[0]
		after = max(0, p.Thread.LastSeq-logWindow)
	}
	sq := url.Values{"agent": {k.Agent}, "resource": {k.Resource}, "thread": {k.Thread}}
	if after > 0 {
		sq.Set("after", itoa(after))
	}
	p.Stream = Prefix + "/thread/stream?" + sq.Encode()
	return c.render(ec, http.StatusOK, "thread", p)
}

// runtimeWait bounds reading a thread from its agent's runtime for the page.
const runtimeWait = 2 * time.Second

// threadRuntime reads k from its agent's runtime, when the runtime reports its runs.
func (c *Console) threadRuntime(ctx context.Context, k inbox.ThreadKey, p *threadPage) {
	if c.d.Runtimes == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, runtimeWait)
	defer cancel()
	r, ok, err := c.d.Runtimes.RuntimeRun(ctx, k)
	switch {
	case err != nil:
		p.RuntimeError = err.Error()
	case ok:
		p.Runtime = &r
	}
}

// repliesShown is how many of a thread's replies its page lists, newest first.
const repliesShown = 20

// streamRecheck is how often a live stream looks at its session: it ends at most this
// long after a sign-out (on any replica) or the session's expiry.
const streamRecheck = 15 * time.Second

// threadStream is the thread's SSE stream under the console session: the page follows
// the log without the agent's token, while the session lives.
func (c *Console) threadStream(ec echo.Context) error {
	k := threadKeyOf(ec.QueryParams())
	ck, err := ec.Cookie(cookieName)
	if err != nil {
		return c.fail(ec, http.StatusUnauthorized, "Your console session has ended: sign in again.")
	}
	ctx, cancel := context.WithCancel(ec.Request().Context())
	defer cancel()
	ec.SetRequest(ec.Request().WithContext(ctx))
	go c.endWithSession(ctx, cancel, ck.Value)
	return c.d.Stream.ServeStream(ec, k)
}

// endWithSession cancels a stream's context once its session has ended (signed out,
// expired, its token changed) or cannot be checked.
func (c *Console) endWithSession(ctx context.Context, cancel context.CancelFunc, cookie string) {
	ticks, stop := c.streamTicks()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		s, err := c.liveSession(ctx, cookie)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Warn("console stream ended: session check failed", "error", err.Error())
		}
		c.streamChecked(s != nil)
		if s == nil {
			cancel()
			return
		}
	}
}

type notificationPage struct {
	admin.NotificationDetail
}

func (notificationPage) title() (string, string) { return "Notification", "threads" }

func (c *Console) notification(ec echo.Context) error {
	d, err := c.d.Admin.Notification(ec.Request().Context(), ec.Param("id"))
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "notification", notificationPage{d})
}

// back is where a form returns to: the page it was on, inside the console.
func back(ec echo.Context) string { return localPath(ec.FormValue("back")) }

func (c *Console) dismiss(ec echo.Context) error {
	if _, err := c.d.Admin.Dismiss(ec.Request().Context(), ec.Param("id"), sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

// snooze hides a pending record until a time: the form's `for` (one of the durations the
// page offers, or any Go duration) from now, or an RFC 3339 `until`.
func (c *Console) snooze(ec echo.Context) error {
	now := c.d.Now().UTC()
	var until time.Time
	if raw := ec.FormValue("until"); raw != "" || ec.FormValue("for") == "" {
		t, err := inbox.ParseSnoozeUntil(raw, now)
		if err != nil {
			return c.fail(ec, http.StatusBadRequest, err.Error())
		}
		until = t
	} else {
		d, err := time.ParseDuration(ec.FormValue("for"))
		if err != nil {
			return c.fail(ec, http.StatusBadRequest, fmt.Sprintf("for: want a duration such as 4h, got %q", ec.FormValue("for")))
		}
		until = now.Add(d)
	}
	if _, err := c.d.Admin.Snooze(ec.Request().Context(), ec.Param("id"), until, sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

func (c *Console) redeliver(ec echo.Context) error {
	if _, err := c.d.Admin.Redeliver(ec.Request().Context(), ec.Param("id"), sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

func (c *Console) redeliverAll(ec echo.Context) error {
	q := url.Values{}
	for _, name := range []string{"agent", "resource", "thread"} {
		if v := ec.FormValue(name); v != "" {
			q.Set(name, v)
		}
	}
	if _, err := c.d.Admin.RedeliverFailed(ec.Request().Context(), q, sessionOf(ec).Name); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

// retryReply queues a failed reply again (POST /admin/v1/replies/{id}/retry).
func (c *Console) retryReply(ec echo.Context) error {
	id := ec.Param("id")
	if !reply.ValidID(id) {
		return c.fail(ec, http.StatusBadRequest, "That is not a reply id.")
	}
	if _, err := c.d.Admin.RetryReply(ec.Request().Context(), id); err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, back(ec))
}

type eventsPage struct {
	Q      url.Values
	Events []inbox.Event
	Next   string
}

func (eventsPage) title() (string, string) { return "Events", "events" }

func (c *Console) events(ec echo.Context) error {
	q := cleanQuery(ec.QueryParams())
	page, err := c.d.Admin.Events(ec.Request().Context(), q)
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "events", eventsPage{Q: q, Events: page.Events, Next: page.NextCursor})
}

// maxShownBody bounds the body a page shows; the admin API has the rest.
const maxShownBody = 256 << 10

type eventPage struct {
	admin.EventDetail
	Shown     string
	Truncated bool
	Replayed  bool
}

func (eventPage) title() (string, string) { return "Event", "events" }

func (c *Console) event(ec echo.Context) error {
	d, err := c.d.Admin.Event(ec.Request().Context(), ec.Param("id"))
	if err != nil {
		return c.failErr(ec, err)
	}
	p := eventPage{EventDetail: d, Replayed: ec.QueryParam("replayed") != ""}
	switch {
	case d.Body != nil:
		p.Shown = *d.Body
	default:
		p.Shown = d.BodyBase64
	}
	if len(p.Shown) > maxShownBody {
		p.Shown, p.Truncated = p.Shown[:maxShownBody], true
	} else if d.Body != nil {
		p.Shown = prettyBody(p.Shown)
	}
	return c.render(ec, http.StatusOK, "event", p)
}

func (c *Console) replay(ec echo.Context) error {
	res, err := c.d.Admin.ReplayEvent(ec.Request().Context(), ec.Param("id"), sessionOf(ec).Name)
	if err != nil {
		return c.failErr(ec, err)
	}
	return ec.Redirect(http.StatusSeeOther, Prefix+"/events/"+url.PathEscape(res.EventID)+"?replayed=1")
}

type deliveriesPage struct {
	Q          url.Values
	Deliveries admin.DeliveryPage
	Failed     []inbox.Record
	MoreFailed bool
	Targets    []admin.TargetStatus
	Self       string
}

func (deliveriesPage) title() (string, string) { return "Deliveries", "deliveries" }

// failedShown is how many dead letters the deliveries page lists.
const failedShown = 50

func (c *Console) deliveries(ec echo.Context) error {
	ctx := ec.Request().Context()
	q := cleanQuery(ec.QueryParams())
	p := deliveriesPage{Q: q, Self: ec.Request().URL.RequestURI()}
	var err error
	if p.Deliveries, err = c.d.Admin.Deliveries(ctx, q); err != nil {
		return c.failErr(ec, err)
	}
	fq := url.Values{"status": {string(inbox.StatusFailed)}, "limit": {itoa(failedShown)}}
	for _, name := range []string{"agent", "resource", "thread"} {
		if v := q.Get(name); v != "" {
			fq.Set(name, v)
		}
	}
	failed, err := c.d.Admin.Notifications(ctx, fq)
	if err != nil {
		return c.failErr(ec, err)
	}
	p.Failed, p.MoreFailed = failed.Notifications, failed.NextCursor != ""
	if p.Targets, err = c.d.Admin.Targets(ctx); err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "deliveries", p)
}

type connectorsPage struct {
	Connectors []admin.ConnectorHealth
}

func (connectorsPage) title() (string, string) { return "Connectors", "connectors" }

func (c *Console) connectors(ec echo.Context) error {
	cs, err := c.d.Admin.Connectors(ec.Request().Context())
	if err != nil {
		return c.failErr(ec, err)
	}
	return c.render(ec, http.StatusOK, "connectors", connectorsPage{Connectors: cs})
}

func itoa[T int | int64](n T) string { return strconv.FormatInt(int64(n), 10) }
