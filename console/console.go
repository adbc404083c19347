// Package console is the operator's web UI at /console: server-rendered pages over the
// admin API's own queries, signed in with an admin token once and kept in a signed,
// HttpOnly session cookie naming a server-side session.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/silence"
)

// Prefix is where the console is mounted.
const Prefix = "/console"

// Config is the `console:` section of config.yaml.
type Config struct {
	// SessionKey signs session cookies (at least 32 bytes). Empty: a random key per
	// process, so sessions end when it restarts; replicas behind one load balancer
	// need the same key.
	SessionKey secret.Secret `yaml:"session_key"`
	// SessionTTL is how long a sign-in lasts.
	SessionTTL time.Duration `yaml:"session_ttl"`
}

// DefaultSessionTTL is a working day.
const DefaultSessionTTL = 12 * time.Hour

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	return c
}

// Validate reports problems with key paths relative to `console`.
func (c Config) Validate() error {
	var errs []error
	if c.SessionKey != "" && len(c.SessionKey) < 32 {
		errs = append(errs, errors.New("session_key: must be at least 32 characters (or unset for a random key per process)"))
	}
	if c.SessionTTL < 0 {
		errs = append(errs, errors.New("session_ttl: must not be negative"))
	}
	return errors.Join(errs...)
}

// Admin is the admin API's queries and actions the console calls: the same filters,
// paging and checks as /admin/v1 (*admin.API).
type Admin interface {
	Authenticate(raw string) (admin.Token, bool)
	Threads(ctx context.Context, q url.Values) (admin.ThreadPage, error)
	Notifications(ctx context.Context, q url.Values) (admin.RecordPage, error)
	Notification(ctx context.Context, id string) (admin.NotificationDetail, error)
	Dismiss(ctx context.Context, id, by string) (inbox.Record, error)
	Snooze(ctx context.Context, id string, until time.Time, by string) (inbox.Record, error)
	Redeliver(ctx context.Context, id, by string) (inbox.Record, error)
	RedeliverFailed(ctx context.Context, q url.Values, by string) (admin.RedeliverResult, error)
	Events(ctx context.Context, q url.Values) (admin.EventPage, error)
	Event(ctx context.Context, id string) (admin.EventDetail, error)
	ReplayEvent(ctx context.Context, id, by string) (admin.ReplayResult, error)
	Deliveries(ctx context.Context, q url.Values) (admin.DeliveryPage, error)
	Connectors(ctx context.Context) ([]admin.ConnectorHealth, error)
	Targets(ctx context.Context) ([]admin.TargetStatus, error)
	Explain(ctx context.Context, s admin.Sample) (*admin.Explanation, error)
	Approvals(ctx context.Context, q url.Values) (admin.ApprovalPage, error)
	Replies(ctx context.Context, q url.Values) (admin.ReplyPage, error)
	RetryReply(ctx context.Context, id string) (admin.AdminReply, error)
	Watches(ctx context.Context, q url.Values) (admin.WatchPage, error)
	EndWatch(ctx context.Context, id, by string) (admin.AdminWatch, error)
	Silences(ctx context.Context, q url.Values) (admin.SilencePage, error)
	CreateSilence(ctx context.Context, in silence.Input) (silence.Silence, error)
	ExpireSilence(ctx context.Context, id, by string) (silence.Silence, error)
}

// Streamer serves a thread's signal log as SSE (*agentapi.API's ServeStream).
type Streamer interface {
	ServeStream(c echo.Context, k inbox.ThreadKey) error
}

// Sessions keeps console sign-ins server-side (*store.DB, shared by replicas on
// PostgreSQL): a cookie is a session only while its row lives, so a sign-out ends it
// for every copy of the cookie.
type Sessions interface {
	CreateConsoleSession(ctx context.Context, id, token string, now, expires time.Time) error
	ConsoleSessionLive(ctx context.Context, id string, now time.Time) (bool, error)
	DeleteConsoleSession(ctx context.Context, id string) error
	DeleteConsoleSessionsOf(ctx context.Context, token string) (int64, error)
}

// Deps are what the console works with.
type Deps struct {
	Admin    Admin
	Stream   Streamer
	Sessions Sessions
	// Tokens are the configured admin tokens: a session lasts only while its token
	// is still configured with the scopes it signed in with.
	Tokens []admin.Token
	// Agents and Connectors are configured ones, for filters and the explain form.
	Agents     []string
	Connectors []admin.ConnectorRef
	// Sources are the integration kinds' sources, in the gateway's order (the events
	// filter), and Places say how the kinds that answer describe where (replies).
	Sources []string
	Places  reply.Places
	// Runtimes reads a thread from its agent's runtime (nil: no page shows one).
	Runtimes agent.RuntimeRuns
	Log      *slog.Logger
	Now      func() time.Time
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Console serves /console.
type Console struct {
	cfg    Config
	d      Deps
	codec  *securecookie.SecureCookie
	key    []byte
	prints map[string]tokenPrint // by token name
	pages  map[string]*template.Template
	static http.Handler
	log    *slog.Logger
	// streamTicks paces a live stream's checks of its session, and streamChecked hears
	// each outcome (a test drives and follows them).
	streamTicks   func() (<-chan time.Time, func())
	streamChecked func(live bool)
}

type tokenPrint struct {
	sum    string
	scopes []string
}

// New builds the console.
func New(cfg Config, d Deps) (*Console, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	if d.Admin == nil || d.Stream == nil || d.Sessions == nil {
		return nil, errors.New("console: the admin API, the thread streams and the session store are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	key := []byte(cfg.SessionKey)
	if len(key) == 0 {
		if key = securecookie.GenerateRandomKey(32); key == nil {
			return nil, errors.New("console: no randomness for a session key")
		}
	}
	pages, err := parsePages(template.FuncMap{
		"place":   d.Places.Describe,
		"replyTo": func(md map[string]any) string { return replyToOf(d.Places, md) },
		// The sources an event filter offers: every integration kind's, and the agent API's.
		"sources": func() []string { return append(slices.Clone(d.Sources), agent.APISource) },
	})
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, d: d, key: key, pages: pages, prints: map[string]tokenPrint{},
		log: d.Log.With("component", "console"), static: http.StripPrefix(Prefix+"/static/", http.FileServerFS(sub)),
		streamTicks: func() (<-chan time.Time, func()) {
			t := time.NewTicker(streamRecheck)
			return t.C, t.Stop
		},
		streamChecked: func(bool) {}}
	// Expiry is checked against the injected clock (the session's own field), so the
	// codec's wall-clock max age is off.
	c.codec = securecookie.New(key, nil).MaxAge(0).SetSerializer(securecookie.JSONEncoder{})
	for _, t := range d.Tokens {
		c.prints[t.Name] = tokenPrint{sum: c.fingerprint(t.Token.Reveal()), scopes: t.Scopes}
	}
	return c, nil
}

// fingerprint ties a session to a token's value without carrying it: a token replaced
// in the config ends the sessions signed in with the old one.
func (c *Console) fingerprint(token string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("token\x00" + token))
	return fmt.Sprintf("%x", m.Sum(nil)[:16])
}

// Mount registers the console's routes on e.
func (c *Console) Mount(e *echo.Echo) {
	e.GET(Prefix, func(ec echo.Context) error { return ec.Redirect(http.StatusSeeOther, Prefix+"/threads") })
	e.GET(Prefix+"/static/*", echo.WrapHandler(c.static), staticHeaders)
	e.GET(Prefix+"/signin", c.signinForm, pageHeaders)
	e.POST(Prefix+"/signin", c.signin, pageHeaders, c.sameOrigin)
	g := e.Group(Prefix, pageHeaders, c.sameOrigin, c.authenticate)
	g.POST("/signout", c.signout, c.checkCSRF)
	g.POST("/signout/everywhere", c.signoutEverywhere, c.checkCSRF)
	g.GET("/threads", c.threads)
	g.GET("/thread", c.thread)
	g.GET("/thread/stream", c.threadStream)
	g.GET("/notifications/:id", c.notification)
	g.POST("/notifications/:id/dismiss", c.dismiss, c.checkCSRF, c.requireWrite)
	g.POST("/notifications/:id/snooze", c.snooze, c.checkCSRF, c.requireWrite)
	g.POST("/notifications/:id/redeliver", c.redeliver, c.checkCSRF, c.requireWrite)
	g.POST("/notifications/redeliver", c.redeliverAll, c.checkCSRF, c.requireWrite)
	g.POST("/replies/:id/retry", c.retryReply, c.checkCSRF, c.requireWrite)
	g.POST("/watches/:id/delete", c.endWatch, c.checkCSRF, c.requireWrite)
	g.GET("/silences", c.silences)
	g.GET("/silences/new", c.newSilence, c.requireWrite)
	g.POST("/silences", c.createSilence, c.checkCSRF, c.requireWrite)
	g.POST("/silences/:id/expire", c.expireSilence, c.checkCSRF, c.requireWrite)
	g.GET("/events", c.events)
	g.GET("/events/:id", c.event)
	g.POST("/events/:id/replay", c.replay, c.checkCSRF, c.requireWrite)
	g.GET("/deliveries", c.deliveries)
	g.GET("/connectors", c.connectors)
	g.GET("/approvals", c.approvals)
	g.GET("/explain", c.explainForm)
	g.POST("/explain", c.explain, c.checkCSRF)
}

// csp allows the console's own files and nothing inline: an event body that slipped
// through escaping still could not run.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func pageHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		h := ec.Response().Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set(echo.HeaderCacheControl, "no-store")
		return next(ec)
	}
}

func staticHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		h := ec.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set(echo.HeaderCacheControl, "no-cache")
		return next(ec)
	}
}

// sameOrigin refuses cross-site unsafe requests by the browser's Sec-Fetch-Site and
// Origin headers (net/http's CrossOriginProtection), beneath the CSRF token.
func (c *Console) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	cop := http.NewCrossOriginProtection()
	return func(ec echo.Context) error {
		if err := cop.Check(ec.Request()); err != nil {
			return c.fail(ec, http.StatusForbidden, "This request came from another site and was refused.")
		}
		return next(ec)
	}
}
