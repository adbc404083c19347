// Package agentapi serves the agent operations (package agent) over HTTP: the agent API
// under /v1/agents/{agent}/threads/{resourceId}/{threadId} and its SSE streams. It only
// translates: authentication, authorization and every rule are the domain's.
package agentapi

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// API serves the agent API.
//
// Authentication: every request carries `Authorization: Bearer <token>` of a configured
// agent. No or an unknown token is 401, whatever the path. An authenticated agent asking
// for an agent id that is not configured gets 404; for another configured agent's threads
// 403. Threads need no creation: any (resourceId, threadId) of the agent is valid.
type API struct {
	svc       *agent.Service
	frames    agent.FrameReader
	broker    agent.Subscriber
	log       *slog.Logger
	keepAlive time.Duration
	done      <-chan struct{}
	// subscribers is told +1 when a stream opens and -1 when it closes (a gauge).
	subscribers func(delta int)
	// streamLimit caps the open streams of both pools together (WithStreamLimit).
	streamLimit int
	streams     *streamCaps
	// viewerStreams counts ServeStream's streams (the console's) apart from the agents'
	// per agent and thread, and within a share of streamLimit.
	viewerStreams *streamCaps
	prev          *API    // see WithStreamsOf; nil once New has taken its caps
	replies       Replies // nil: no connector sends replies
	watches       Watches // nil: watches are not served
}

// Option configures the API.
type Option func(*API)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(a *API) { a.log = l } }

// WithKeepAlive sets the interval of `: keep-alive` comments on streams.
func WithKeepAlive(d time.Duration) Option { return func(a *API) { a.keepAlive = d } }

// WithShutdown ends open streams when done closes (server.Server.Done): http.Server's
// Shutdown waits for handlers but never cancels their contexts.
func WithShutdown(done <-chan struct{}) Option { return func(a *API) { a.done = done } }

// WithStreamLimit caps the open streams of all agents and console viewers together
// (server.Config's MaxStreams); a limit below 1 keeps the default.
func WithStreamLimit(n int) Option {
	return func(a *API) {
		if n > 0 {
			a.streamLimit = n
		}
	}
}

// WithSubscriberGauge reports streams opening (+1) and closing (-1).
func WithSubscriberGauge(fn func(delta int)) Option { return func(a *API) { a.subscribers = fn } }

// New builds the agent API over svc; streams read thread logs from frames and wait for
// the broker's wake-ups.
func New(svc *agent.Service, frames agent.FrameReader, broker agent.Subscriber, opts ...Option) *API {
	a := &API{svc: svc, frames: frames, broker: broker, log: slog.Default(), keepAlive: DefaultKeepAlive, subscribers: func(int) {},
		streamLimit: server.Config{}.WithDefaults().MaxStreams()}
	for _, o := range opts {
		o(a)
	}
	a.log = a.log.With("component", "agent_api")
	if a.keepAlive <= 0 {
		a.keepAlive = DefaultKeepAlive
	}
	if a.prev != nil {
		// The caps count the streams the previous API still serves.
		a.streams, a.viewerStreams, a.prev = a.prev.streams, a.prev.viewerStreams, nil
		return a
	}
	budget := &streamBudget{limit: a.streamLimit}
	a.streams = newStreamCaps(budget, a.streamLimit, "agents")
	a.viewerStreams = newStreamCaps(budget, viewerShare(a.streamLimit), "console viewers")
	return a
}

// WithStreamsOf makes the API count its streams with prev's, which keeps serving the
// streams it opened: a config reload mounts a new API while those stay open, and the
// caps hold over both.
func WithStreamsOf(prev *API) Option { return func(a *API) { a.prev = prev } }

// ThreadPath is the route prefix of a thread.
const ThreadPath = "/v1/agents/:agent/threads/:resourceId/:threadId"

// Mount registers the routes on e.
func (a *API) Mount(e *echo.Echo) {
	g := e.Group(ThreadPath, a.authenticate)
	g.GET("/stream", a.thread(a.serveStream))
	g.POST("/runs", a.thread(a.openRun))
	g.POST("/runs/:runId/heartbeat", a.thread(a.heartbeat))
	g.POST("/runs/:runId/finish", a.thread(a.finishRun))
	g.POST("/hooks/claude-code", a.thread(a.claudeCodeHook))
	g.POST("/signals", a.thread(a.sendSignal))
	g.POST("/notifications", a.thread(a.createNotification))
	g.GET("/notifications", a.thread(a.listNotifications))
	g.POST("/notifications/read", a.thread(a.readNotifications))
	g.GET("/notifications/:id", a.thread(a.getNotification))
	g.POST("/notifications/:id/snooze", a.thread(a.snoozeNotification))
	g.POST("/notifications/:id/:action", a.thread(a.actOnNotification))
	g.POST("/approvals", a.thread(a.requestApproval))
	g.POST("/messages/cancel", a.thread(a.cancelMessages))
	g.POST("/replies", a.thread(a.createReply))
	g.GET("/replies/:id", a.thread(a.getReply))
	g.POST("/watches", a.thread(a.createWatch))
	g.GET("/watches", a.thread(a.listWatches))
	g.GET("/watches/:id", a.thread(a.getWatch))
	g.DELETE("/watches/:id", a.thread(a.deleteWatch))
}

const threadKeyCtx = "signalgate.thread"

// authenticate runs before routing's 404 for the group, so an unknown token never learns
// which paths exist.
func (a *API) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		caller, err := a.svc.Caller(c.Request().Header.Get(echo.HeaderAuthorization))
		if err != nil {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="signalgate"`)
			return httpError(err)
		}
		var name, resource, thread string
		if name, err = pathParam(c, "agent"); err != nil {
			return err
		}
		if err := a.svc.Authorize(caller, name); err != nil {
			return httpError(err)
		}
		if resource, err = pathParam(c, "resourceId"); err != nil {
			return err
		}
		if thread, err = pathParam(c, "threadId"); err != nil {
			return err
		}
		k, err := a.svc.Thread(caller, name, resource, thread)
		if err != nil {
			return httpError(err)
		}
		c.Set(threadKeyCtx, k)
		return next(c)
	}
}

// thread adapts a handler that needs the authenticated thread, and answers the domain's
// refusals in HTTP terms.
func (a *API) thread(h func(echo.Context, inbox.ThreadKey) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		k, ok := c.Get(threadKeyCtx).(inbox.ThreadKey)
		if !ok {
			return server.Unauthorized()
		}
		err := h(c, k)
		var full *agent.WakesFullError
		if errors.As(err, &full) {
			c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(full.RetryAfter)))
		}
		return httpError(err)
	}
}

// retryAfterSeconds is d as Retry-After's whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

// httpError is the HTTP answer to a domain refusal; other errors pass as they are.
func httpError(err error) error {
	var ae *agent.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae):
		return server.NewError(statusOf(ae.Kind), ae.Code, "%s", ae.Message)
	case errors.Is(err, agent.ErrDeliveryFailed):
		return server.NewError(http.StatusBadGateway, "delivery_failed", "%s", agent.ErrDeliveryFailed.Error())
	case errors.Is(err, agent.ErrAbortFailed):
		return server.NewError(http.StatusBadGateway, "abort_failed", "%s", agent.ErrAbortFailed.Error())
	}
	var full *agent.WakesFullError
	if errors.As(err, &full) {
		return server.NewError(http.StatusTooManyRequests, "wakes_full", "%s", full.Error())
	}
	return err
}

func statusOf(k agent.ErrorKind) int {
	switch k {
	case agent.KindInvalid:
		return http.StatusBadRequest
	case agent.KindUnauthenticated:
		return http.StatusUnauthorized
	case agent.KindForbidden:
		return http.StatusForbidden
	case agent.KindNotFound:
		return http.StatusNotFound
	case agent.KindConflict:
		return http.StatusConflict
	case agent.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// pathParam returns a path parameter unescaped. echo matches on the raw path when the URL
// has escapes Go would not produce itself (e.g. %2F inside a segment) and then leaves
// parameters escaped; otherwise it matches on the decoded path.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", server.BadRequest("%s: invalid URL escape in %q", name, v)
	}
	return u, nil
}

func pathID(c echo.Context, name string) (string, error) {
	v, err := pathParam(c, name)
	if err != nil {
		return "", err
	}
	if err := inbox.CheckID(v); err != nil {
		return "", server.BadRequest("%s: %v", name, err)
	}
	return v, nil
}

// decodeBody reads a JSON body into v (agent.DecodeJSON). An empty body is allowed only
// when optional.
func decodeBody(c echo.Context, v any, optional bool) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // the body limit's 413 passes through
	}
	return agent.DecodeJSON(body, v, optional)
}
