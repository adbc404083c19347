// Package inboxmcp serves the agent inbox as Model Context Protocol tools at /mcp
// (streamable HTTP, the official Go SDK). Every tool calls the agent operations
// (agent.Service) and their authorization, as the agent API does; this package only
// translates.
//
// The endpoint is stateless: a request is authenticated with the agent's bearer token,
// served by a session that lives for that request alone, and forgotten. Nothing is kept
// between requests, so strangers cannot grow any session table, no idle session waits
// for a timer, and any replica behind a load balancer answers any request. GET (the
// optional server-to-client stream) and DELETE (session end) are 405.
package inboxmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
)

// Path is where the MCP endpoint is mounted.
const Path = "/mcp"

// Bounds.
const (
	// DefaultMaxBody bounds one MCP request body (a JSON-RPC message or batch); larger
	// ones are 413 before any parsing.
	DefaultMaxBody = 1 << 20
	// DefaultCallTimeout bounds one tool call's work.
	DefaultCallTimeout = 30 * time.Second
)

// Inbox is the agent inbox (agent.Service): authentication, authorization and the
// operations.
type Inbox interface {
	Caller(header string) (string, error)
	Thread(caller, agent, resource, thread string) (inbox.ThreadKey, error)
	ListInbox(ctx context.Context, k inbox.ThreadKey, p agent.ListParams) (agent.InboxPage, error)
	ReadInbox(ctx context.Context, k inbox.ThreadKey, ids []string) ([]agent.ReadNotification, error)
	ActOn(ctx context.Context, k inbox.ThreadKey, id, action string) (inbox.Record, error)
	Snooze(ctx context.Context, k inbox.ThreadKey, id, until string) (inbox.Record, error)
	CreateNotification(ctx context.Context, k inbox.ThreadKey, body []byte, idempotencyKey string) (agent.NotificationResult, error)
	InboxToolList(ctx context.Context, k inbox.ThreadKey, q agent.InboxToolQuery, search bool) (agent.InboxToolPage, error)
	InboxToolReadRecords(ctx context.Context, k inbox.ThreadKey, id string, q agent.InboxToolQuery) (agent.InboxToolRead, error)
	CreateNotifications(ctx context.Context, k inbox.ThreadKey, body []byte, idempotencyKey string) ([]agent.NotificationResult, error)
}

// Server is the MCP endpoint.
type Server struct {
	inbox       Inbox
	log         *slog.Logger
	mcp         *mcp.Server
	handler     http.Handler
	maxBody     int64
	callTimeout time.Duration
	version     string
	replies     Replies // nil: no connector sends replies
	watches     Watches // nil: watches are not served
	places      reply.Places
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithMaxBody bounds a request body in bytes.
func WithMaxBody(n int64) Option { return func(s *Server) { s.maxBody = n } }

// WithCallTimeout bounds one tool call.
func WithCallTimeout(d time.Duration) Option { return func(s *Server) { s.callTimeout = d } }

// WithPlaces says how each connector kind's places read (the kinds table's place
// codecs): the reply tool's replyTo takes their fields, and listings show a record's
// replyTo as its kind writes it.
func WithPlaces(p reply.Places) Option { return func(s *Server) { s.places = p } }

// WithVersion is the server version announced at initialize.
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// New builds the MCP server over the agent inbox.
func New(in Inbox, opts ...Option) *Server {
	s := &Server{inbox: in, log: slog.Default(), maxBody: DefaultMaxBody, callTimeout: DefaultCallTimeout, version: "dev"}
	for _, o := range opts {
		o(s)
	}
	s.log = s.log.With("component", "mcp")
	// The SDK logs every stateless request's session at info; only its warnings and
	// errors are worth a line.
	sdkLog := slog.New(minLevel{Handler: s.log.Handler(), min: slog.LevelWarn})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "signalgate", Title: "signalgate agent inbox", Version: s.version},
		&mcp.ServerOptions{Instructions: instructions, Logger: sdkLog})
	s.addTools()
	s.addInboxTool()
	s.addReplyTools()
	s.addWatchTools()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true, // one bounded JSON answer per request, no stream held open
		Logger:       sdkLog,
		// The SDK refuses a non-loopback Host on a loopback listener against DNS
		// rebinding. Every request here needs the agent's bearer token, which a
		// rebinding page cannot present, and a reverse proxy in front of a loopback
		// listener forwards the public Host: the check would only break that setup.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        s.maxBody,
	})
	s.handler = auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(s.bound(h))
	return s
}

const instructions = `The signalgate agent inbox: notifications (GitHub, Slack, email and webhook events) the gateway routed to your conversation threads. ` +
	`Every tool names a thread by resourceId and threadId. inbox_list and inbox_search only look; inbox_read returns notifications in full and marks them seen; ` +
	`inbox_dismiss and inbox_archive move one; inbox_snooze hides a pending one until a time; notify creates a notification on a thread. ` +
	`notification-inbox is Mastra's inbox tool: its list, search and read mark what they return seen, and read hands unread notifications to the thread as signals. ` +
	`Where the gateway sends replies, reply answers where a notification came from (its replyTo) and reply_status shows whether it was sent. ` +
	`Where the gateway serves watches, watch makes a thread hear about one pull request, issue, Slack thread or email conversation until it is done; watches lists them and unwatch stops one.`

// verify authenticates with the agent operations' own token check. Agent tokens do not expire.
func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	caller, err := s.inbox.Caller("Bearer " + token)
	if err != nil {
		return nil, fmt.Errorf("%w: missing or invalid credentials", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: caller}, nil
}

// Mount registers POST /mcp. Only POST is routed: a stateless server has no stream to
// GET and no session to DELETE, and echo answers those 405.
func (s *Server) Mount(e *echo.Echo) {
	e.POST(Path, echo.WrapHandler(challenge(s.handler)))
}

// maxBatch bounds the JSON-RPC messages of one request: the 2025-03-26 protocol lets a
// client batch them, and each call is a database query.
const maxBatch = 16

// bound reads the body within its limit and refuses an oversized batch before the SDK
// parses anything; it runs after authentication, so a stranger's body is never read.
func (s *Server) bound(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", s.maxBody), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading the request body failed", http.StatusBadRequest)
			return
		}
		if batchLen(body) > maxBatch {
			http.Error(w, fmt.Sprintf("a JSON-RPC batch holds at most %d messages", maxBatch), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// challenge adds the WWW-Authenticate header RFC 6750 asks of a 401, as the agent API
// sends it; the SDK's middleware sends it only for OAuth metadata.
func challenge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&challengeWriter{ResponseWriter: w}, r)
	})
}

// batchLen counts the messages of a JSON array body, stopping past maxBatch; anything
// else is 0 (the SDK parses and judges it).
func batchLen(body []byte) int {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	n := 0
	for dec.More() && n <= maxBatch {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n
		}
		n++
	}
	return n
}

type challengeWriter struct{ http.ResponseWriter }

func (w *challengeWriter) WriteHeader(status int) {
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="signalgate"`)
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

// openSessions counts the sessions the SDK holds: always none between requests.
func (s *Server) openSessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// toolError turns an agent operation's refusal into the tool error a model reads: the
// same message the agent API answers, prefixed with its code. Server faults are logged
// and not described (they may name internals).
func (s *Server) toolError(tool string, err error) error {
	var ae *agent.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %s", ae.Code, ae.Message)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timeout: %s did not finish within %s; try again", tool, s.callTimeout)
	}
	s.log.Error("tool failed", "tool", tool, "error", err.Error())
	return fmt.Errorf("internal: %s failed on the gateway's side (logged); try again later", tool)
}
