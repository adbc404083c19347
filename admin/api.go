package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/bearer"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/server"
)

// Prefix is where the admin API is mounted.
const Prefix = "/admin/v1"

// Parser turns a stored or sample event back into a connector's items without
// verifying it (each connector's handler; email.Parser for mailboxes). A
// *connectors.NotMapped error means the connector stores the event without items.
type Parser interface {
	Items(ctx context.Context, ev *inbox.Event) ([]connectors.Item, error)
}

// Parsers are the connectors' parse steps by source (github, slack, email, generic).
type Parsers map[string]Parser

// Poller is an email connector's live mailbox state (*email.Poller).
type Poller interface {
	Status() email.Status
}

// AsPollers adapts a slice of concrete pollers.
func AsPollers[P Poller](ps []P) []Poller {
	out := make([]Poller, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// ConnectorRef names one configured connector.
type ConnectorRef struct {
	Source string `json:"source"`
	Name   string `json:"name"`
}

// Deps are what the admin API works with.
type Deps struct {
	Store Store
	// Inbox stores replays, as connectors store events (the inbox service).
	Inbox  connectors.Ingester
	Policy *inbox.Policy
	// Router is the configured routes, compiled once (nil: no routes).
	Router *connectors.Router
	Agents []string
	// TargetKinds is each agent's target kind, by agent id.
	TargetKinds map[string]string
	// Targets are the target kinds, in the gateway's order (the OpenAPI document's enum).
	Targets []string
	// Runtimes are the target kinds whose runtime reports its runs and may ask people
	// (an approval's origin), in the gateway's order.
	Runtimes []string
	// Wakes is each agent's wake budget and cap, by agent id (explain shows them).
	Wakes map[string]agent.WakeSettings
	// Sources are the integration kinds' sources, in the gateway's order (the OpenAPI
	// document's and explain's list of them); Places are the kinds that answer and
	// Watchable the sources a watch may name (the document's replyTo and watch schemas).
	Sources    []string
	Places     reply.Places
	Watchable  []string
	Parsers    Parsers
	Connectors []ConnectorRef
	// Refusals are the HTTP connectors' last refusals (nil: none are kept).
	Refusals RefusalLogs
	Pollers  []Poller
	// Notify is told of threads with records queued again (the dispatcher's Notify).
	Notify func([]inbox.ThreadKey)
	// Replies is the reply outbox (nil: no connector sends replies; the list is empty).
	Replies Replies
	// Watches reads watches and WatchEnder ends them for an operator (nil: none; the
	// list is empty).
	Watches    WatchReader
	WatchEnder WatchEnder
	// WatchLookup finds the watches an event reaches (watch.Store; nil: explain shows
	// none).
	WatchLookup connectors.WatchLookup
	// Schedules creates, changes and fires schedules (nil: none; the list is empty).
	Schedules Schedules
	// Silences makes, lists and expires silences, and Holder says which one would hold
	// an event (explain); nil: none.
	Silences Silences
	Holder   inbox.Holder
	// TraceURL is the operator's trace URL template (telemetry.trace_url): records and
	// events link to their trace with it ("" : no links).
	TraceURL string
	Log      *slog.Logger
	Now      func() time.Time
}

// Route is one admin endpoint and the scope its token needs.
type Route struct {
	Method string
	Path   string // echo syntax, with Prefix
	Scope  string
}

type route struct {
	Route
	h echo.HandlerFunc
}

// API serves /admin/v1 and the OpenAPI document at /openapi.json.
//
// Every admin request carries `Authorization: Bearer <token>` of a configured admin
// token: none or an unknown one is 401 whatever the path, a token without the route's
// scope is 403. Reads need `read`, changes need `write` (which implies read); explain
// writes nothing and needs `read`.
type API struct {
	d         Deps
	tokens    bearer.Table[Token]
	router    *connectors.Router
	explainer *Explainer
	log       *slog.Logger
	routes    []route
	openapi   []byte
}

// New builds the admin API.
func New(cfg Config, d Deps) (*API, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if d.Inbox == nil {
		return nil, errors.New("admin: an inbox is required (replays are stored through it)")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Notify == nil {
		d.Notify = func([]inbox.ThreadKey) {}
	}
	if d.Store == nil {
		return nil, errors.New("admin: a store is required")
	}
	x, err := NewExplainer(d.Store, d)
	if err != nil {
		return nil, err
	}
	doc, err := OpenAPI(Kinds{Sources: d.Sources, Places: d.Places, Watchable: d.Watchable, Targets: d.Targets, Runtimes: d.Runtimes})
	if err != nil {
		return nil, err
	}
	a := &API{d: d, router: x.router, explainer: x, log: d.Log.With("component", "admin"), openapi: doc}
	for _, t := range cfg.Tokens {
		a.tokens.Add(t.Token.Reveal(), t)
	}
	a.routes = []route{
		{Route{http.MethodGet, "/events", ScopeRead}, a.listEvents},
		{Route{http.MethodPost, "/events/replay", ScopeWrite}, a.replayEvents},
		{Route{http.MethodGet, "/events/:id", ScopeRead}, a.getEvent},
		{Route{http.MethodPost, "/events/:id/replay", ScopeWrite}, a.replayEvent},
		{Route{http.MethodGet, "/notifications", ScopeRead}, a.listNotifications},
		{Route{http.MethodPost, "/notifications/redeliver", ScopeWrite}, a.redeliverFailed},
		{Route{http.MethodGet, "/notifications/:id", ScopeRead}, a.getNotification},
		{Route{http.MethodPost, "/notifications/:id/dismiss", ScopeWrite}, a.dismiss},
		{Route{http.MethodPost, "/notifications/:id/redeliver", ScopeWrite}, a.redeliver},
		{Route{http.MethodGet, "/threads", ScopeRead}, a.listThreads},
		{Route{http.MethodGet, "/deliveries", ScopeRead}, a.listDeliveries},
		{Route{http.MethodGet, "/connectors", ScopeRead}, a.listConnectors},
		{Route{http.MethodGet, "/connectors/:source/:name/refusals", ScopeRead}, a.connectorRefusals},
		{Route{http.MethodGet, "/targets", ScopeRead}, a.listTargets},
		{Route{http.MethodPost, "/explain", ScopeRead}, a.explain},
		{Route{http.MethodGet, "/approvals", ScopeRead}, a.listApprovals},
		{Route{http.MethodGet, "/approvals/:id", ScopeRead}, a.getApproval},
		{Route{http.MethodGet, "/replies", ScopeRead}, a.listReplies},
		{Route{http.MethodGet, "/replies/:id", ScopeRead}, a.getReply},
		{Route{http.MethodPost, "/replies/:id/retry", ScopeWrite}, a.retryReply},
		{Route{http.MethodGet, "/watches", ScopeRead}, a.listWatches},
		{Route{http.MethodGet, "/watches/:id", ScopeRead}, a.getWatch},
		{Route{http.MethodDelete, "/watches/:id", ScopeWrite}, a.deleteWatch},
	}
	a.routes = append(a.routes, a.scheduleRoutes()...)
	a.routes = append(a.routes, a.silenceRoutes()...)
	if cfg.Pprof {
		a.routes = append(a.routes, route{Route{http.MethodGet, pprofPath, ScopeWrite}, servePprof})
	}
	return a, nil
}

// Routes lists the admin endpoints with the scope each needs.
func (a *API) Routes() []Route {
	out := make([]Route, len(a.routes))
	for i, r := range a.routes {
		out[i] = r.Route
		out[i].Path = Prefix + r.Path
	}
	return out
}

// Mount registers the routes on e. Authentication is group middleware, so it runs
// before routing's 404 too: an unknown token never learns which paths exist.
func (a *API) Mount(e *echo.Echo) {
	e.GET("/openapi.json", a.serveOpenAPI)
	g := e.Group(Prefix, a.authenticate)
	for _, r := range a.routes {
		g.Add(r.Method, r.Path, r.h, requireScope(r.Scope))
	}
}

const tokenCtx = "signalgate.admin_token"

func (a *API) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tok, ok := a.caller(c.Request().Header.Get(echo.HeaderAuthorization))
		if !ok {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="signalgate-admin"`)
			return server.Unauthorized()
		}
		c.Set(tokenCtx, tok)
		return next(c)
	}
}

// caller finds the token an Authorization header presents.
func (a *API) caller(header string) (Token, bool) { return a.tokens.FromHeader(header) }

// Authenticate finds the configured admin token raw is, for callers that take the token
// once and keep a session (the console).
func (a *API) Authenticate(raw string) (Token, bool) { return a.tokens.Lookup(raw) }

func requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			tok, ok := c.Get(tokenCtx).(Token)
			if !ok {
				return server.Unauthorized()
			}
			if !tok.Has(scope) {
				return server.Forbidden("admin token %q lacks the %s scope", tok.Name, scope)
			}
			return next(c)
		}
	}
}

// tokenName names the caller in logs; the token itself is never logged.
func tokenName(c echo.Context) string {
	tok, _ := c.Get(tokenCtx).(Token)
	return tok.Name
}

func (a *API) serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, a.openapi)
}

// notFound maps inbox.ErrNotFound to a 404 naming what was asked for.
func notFound(err error, what, id string) error {
	if errors.Is(err, inbox.ErrNotFound) {
		return server.NotFound("%s %q not found", what, id)
	}
	return err
}
