// Package server is the HTTP front of the gateway: one echo instance with the shared
// middleware, the JSON error shape, health endpoints and graceful shutdown. Routes are
// mounted by the packages that own them; package gateway wires them here.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/netutil"

	"github.com/signalgate/signalgate/telemetry"
)

// Config is the `server:` section of config.yaml.
type Config struct {
	Listen        string        `yaml:"listen"`
	BodyLimit     ByteSize      `yaml:"body_limit"`
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
	// RequestTimeout bounds ordinary requests; streams are exempt.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// TrustProxy takes the client address from X-Forwarded-For (only behind a proxy you run).
	TrustProxy bool `yaml:"trust_proxy"`
	// BodyTimeout bounds receiving a request body, from the end of its headers.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// IdleTimeout closes a keep-alive connection with no request for this long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxBodyReads caps the request bodies being received at once (each holds memory as
	// it arrives); beyond it requests are answered 503 with Retry-After.
	MaxBodyReads int `yaml:"max_body_reads"`
	// MaxConnections caps open client connections (each holds buffers and, while its
	// headers arrive, up to MaxHeaderBytes); further connections wait to be accepted.
	MaxConnections int `yaml:"max_connections"`
	// MaxHeaderBytes bounds a request's line and headers; larger get 431.
	MaxHeaderBytes ByteSize `yaml:"max_header_bytes"`
}

// Defaults for the server section.
const (
	DefaultListen         = "127.0.0.1:8080"
	DefaultBodyLimit      = 25 << 20 // GitHub's maximum payload
	DefaultShutdownGrace  = 15 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultBodyTimeout    = 15 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxBodyReads   = 8
	// Streams of all agents and console viewers together hold at most three quarters
	// of them (MaxStreams), so ingest and the APIs keep the rest.
	DefaultMaxConnections = 4096
	DefaultMaxHeaderBytes = 64 << 10
	// headerTimeout bounds receiving a request's headers.
	headerTimeout = 10 * time.Second
)

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.BodyLimit == 0 {
		c.BodyLimit = DefaultBodyLimit
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxBodyReads == 0 {
		c.MaxBodyReads = DefaultMaxBodyReads
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return c
}

// MaxStreams is how many connections long-lived streams (agents' and console viewers'
// thread streams together) may hold: three quarters of MaxConnections, so a crowd of
// streams still leaves connections for ingest and the APIs.
func (c Config) MaxStreams() int {
	return max(c.MaxConnections-c.MaxConnections/4, 1)
}

// Validate reports problems with key paths relative to `server`.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); c.Listen != "" && err != nil {
		errs = append(errs, fmt.Errorf("listen: want host:port, got %q", c.Listen))
	}
	if c.BodyLimit < 0 {
		errs = append(errs, errors.New("body_limit: must be positive"))
	}
	if c.ShutdownGrace < 0 {
		errs = append(errs, errors.New("shutdown_grace: must not be negative"))
	}
	if c.RequestTimeout < 0 {
		errs = append(errs, errors.New("request_timeout: must not be negative"))
	}
	if c.BodyTimeout < 0 {
		errs = append(errs, errors.New("body_timeout: must not be negative"))
	}
	if c.IdleTimeout < 0 {
		errs = append(errs, errors.New("idle_timeout: must not be negative"))
	}
	if c.MaxBodyReads < 0 {
		errs = append(errs, errors.New("max_body_reads: must not be negative"))
	}
	if c.MaxConnections < 0 {
		errs = append(errs, errors.New("max_connections: must not be negative"))
	}
	if c.MaxHeaderBytes < 0 {
		errs = append(errs, errors.New("max_header_bytes: must not be negative"))
	}
	return errors.Join(errs...)
}

// Loopback reports whether a listen address only accepts connections from this machine:
// a loopback IP or "localhost". An empty host (":8080") listens on every interface, and a
// hostname other than localhost could resolve to anything, so neither counts.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server owns the listener and the router in force.
type Server struct {
	cfg Config
	// echo owns the listener and the http.Server; cur is the router requests go to.
	echo    *echo.Echo
	cur     atomic.Pointer[echo.Echo]
	guard   *bodyGuard
	observe []echo.MiddlewareFunc
	trace   echo.MiddlewareFunc // nil: tracing off
	ready   func(context.Context) error
	log     *slog.Logger
	stop    context.CancelFunc
	base    context.Context
	ln      net.Listener
	served  chan error
}

// IsStream marks the routes that stay open (SSE): no request timeout applies to them.
// It goes by the matched route alone, never by what the request asks for (an Accept
// header would let any request shed its timeouts).
func IsStream(c echo.Context) bool {
	return strings.HasSuffix(c.Path(), "/stream")
}

// Option configures a Server.
type Option func(*options)

type options struct {
	observe []echo.MiddlewareFunc
	traces  trace.TracerProvider
	now     func() time.Time
}

// WithObserver runs mw around every routed request, outside the server's own limits, so
// it sees their answers too (413, 503, timeouts): the metrics middleware.
func WithObserver(mw ...echo.MiddlewareFunc) Option {
	return func(o *options) { o.observe = append(o.observe, mw...) }
}

// New builds the echo instance with the shared middleware.
func New(cfg Config, log *slog.Logger, opts ...Option) *Server {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	cfg = cfg.WithDefaults()
	base, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, stop: stop, base: base, guard: newBodyGuard(cfg), observe: o.observe}
	if telemetry.Enabled(o.traces) {
		s.trace = traceMiddleware(o.traces, o.now)
	}
	s.echo = s.NewRouter()
	s.cur.Store(s.echo)
	e := s.echo
	e.Server.ReadHeaderTimeout = headerTimeout
	e.Server.MaxHeaderBytes = int(cfg.MaxHeaderBytes)
	e.Server.IdleTimeout = cfg.IdleTimeout
	// Counted from the end of the headers, so it covers receiving the body too. Streams
	// clear their own deadline.
	e.Server.WriteTimeout = max(cfg.RequestTimeout, cfg.BodyTimeout) + 5*time.Second
	e.Server.BaseContext = func(net.Listener) context.Context { return base }
	// Each request is routed by the router in force when it arrives (Serve swaps it).
	e.Server.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.cur.Load().ServeHTTP(w, r) })
	e.Server.ErrorLog = e.StdLogger
	return s
}

// NewRouter builds a router with the server's middleware (sharing its limits) and the
// health endpoints, serving nothing until Serve puts it in force: a config reload
// mounts the new generation's routes on one.
func (s *Server) NewRouter() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = echo.ExtractIPDirect()
	if s.cfg.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	e.HTTPErrorHandler = errorHandler(s.log)
	e.Pre(s.guard.deadline)
	if s.trace != nil {
		// Outermost: it sees the answer of every limit and of a recovered panic.
		e.Use(s.trace)
	}
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true}))
	e.Use(middleware.RequestID())
	e.Use(s.observe...)
	e.Use(middleware.BodyLimit(fmt.Sprintf("%dB", int64(s.cfg.BodyLimit))))
	e.Use(s.guard.middleware)
	e.Use(middleware.ContextTimeoutWithConfig(middleware.ContextTimeoutConfig{
		Timeout: s.cfg.RequestTimeout,
		Skipper: IsStream,
	}))
	if s.ready != nil {
		s.health(e)
	}
	return e
}

// Serve puts e in force: requests arriving from now on are routed by it, while those
// in flight (open streams included) finish on the router that took them.
func (s *Server) Serve(e *echo.Echo) { s.cur.Store(e) }

// Echo exposes the router in force for mounting routes.
func (s *Server) Echo() *echo.Echo { return s.cur.Load() }

// Health mounts /healthz (process up) and /readyz (ready reports nil), on the router in
// force and on every router NewRouter builds from now on.
func (s *Server) Health(ready func(context.Context) error) {
	s.ready = ready
	s.health(s.cur.Load())
}

func (s *Server) health(e *echo.Echo) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		if err := s.ready(c.Request().Context()); err != nil {
			// The cause (a DSN host, a user name, a schema) is for the operator's log,
			// not for whoever can reach the port.
			s.log.Warn("not ready", "component", "server", "error", err.Error())
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}

// Listen binds the configured address (":0" style ports are fine) and returns it.
func (s *Server) Listen() (net.Addr, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	// Beyond the cap a connection waits in the kernel's accept queue until one closes:
	// idle and slow connections are closed by their timeouts, so the wait is bounded.
	ln = netutil.LimitListener(ln, s.cfg.MaxConnections)
	s.ln = ln
	s.echo.Listener = ln
	return ln.Addr(), nil
}

// Start serves in a goroutine owned by the server; Shutdown stops it.
func (s *Server) Start() {
	s.served = make(chan error, 1)
	go func() {
		err := s.echo.Server.Serve(s.ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.served <- err
	}()
}

// Shutdown ends streams, stops accepting, and waits for in-flight requests.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop() // long-lived handlers watch the base context
	err := s.echo.Shutdown(ctx)
	if s.served != nil {
		if serr := <-s.served; serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// Done is closed when the base context ends (shutdown begun); streams select on it.
func (s *Server) Done() <-chan struct{} { return s.base.Done() }
