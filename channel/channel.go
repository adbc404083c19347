// Package channel is the Claude Code channel: a stdio MCP server Claude Code starts
// that pushes an agent thread's signals into the session as they arrive.
//
// It is a client of a running gateway, with the agent's token: it follows the thread's
// stream over the agent API (resuming with Last-Event-ID after a dropped connection or
// a gateway restart, so each signal is sent once and in order) and sends every signal
// as a notifications/claude/channel notification. Its tools are the gateway's own MCP
// tools (/mcp), proxied with the channel's thread as their default thread, so the
// session answers in Slack or GitHub through the reply outbox. Claude Code's permission
// prompts become Slack approvals (POST …/approvals), and their decisions come back on
// the stream as the verdict Claude Code waits for.
package channel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the channel needs to reach its thread.
type Config struct {
	// URL is the gateway's base URL (http://127.0.0.1:8080).
	URL string
	// Token is the agent's bearer token.
	Token string
	// Agent, Resource and Thread name the thread.
	Agent, Resource, Thread string
	// After is where the stream starts: "latest" (only what comes next), "0" (the whole
	// log) or a sequence number.
	After string
	// Permissions relays Claude Code's permission prompts to Slack approvals.
	Permissions bool
	// Version is announced at initialize.
	Version string
	// Backoff is the first wait before reconnecting (default 1s); it doubles up to 30s.
	Backoff time.Duration
	// HTTP is the client for the gateway (default: one without a timeout, for streams).
	HTTP   *http.Client
	Logger *slog.Logger
}

// Server is one channel: one thread, one Claude Code session.
type Server struct {
	base        string
	token       string
	threadPath  string
	threadName  string
	thread      threadArgs
	after       string
	permissions bool
	version     string
	backoff     time.Duration
	http        *http.Client
	log         *slog.Logger
	instance    string // tells this process's approval ids apart from an earlier one's

	mcp   *mcp.Server
	tap   *tapTransport
	tools *toolProxy

	// Test hooks: called after a signal was sent, and before waiting to reconnect.
	testSent      func()
	testReconnect func()
}

type threadArgs struct{ Agent, Resource, Thread string }

// New checks cfg and builds the channel.
func New(cfg Config) (*Server, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url: want http(s)://host:port, got %q", cfg.URL)
	}
	switch {
	case cfg.Token == "":
		return nil, errors.New("token: required")
	case strings.TrimSpace(cfg.Agent) == "":
		return nil, errors.New("agent: required")
	case strings.TrimSpace(cfg.Resource) == "":
		return nil, errors.New("resource: required")
	case strings.TrimSpace(cfg.Thread) == "":
		return nil, errors.New("thread: required")
	}
	s := &Server{
		base: strings.TrimRight(cfg.URL, "/"), token: cfg.Token,
		threadPath: "/v1/agents/" + url.PathEscape(cfg.Agent) + "/threads/" + url.PathEscape(cfg.Resource) + "/" + url.PathEscape(cfg.Thread),
		threadName: cfg.Agent + "/" + cfg.Resource + "/" + cfg.Thread,
		thread:     threadArgs{cfg.Agent, cfg.Resource, cfg.Thread},
		after:      cfg.After, permissions: cfg.Permissions, version: cfg.Version,
		backoff: cfg.Backoff, http: cfg.HTTP, log: cfg.Logger, instance: rand.Text()[:10],
	}
	if s.after == "" {
		s.after = "latest"
	}
	if s.version == "" {
		s.version = "dev"
	}
	if s.backoff <= 0 {
		s.backoff = time.Second
	}
	if s.http == nil {
		s.http = &http.Client{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = s.log.With("component", "channel")
	return s, nil
}

// ProtocolVersions are the MCP revisions the channel speaks: the SDK's, up to
// 2025-11-25. Claude Code first probes server/discover (the 2026-07-28 revision); a
// server that answers it is a "modern" connection, which has no unsolicited
// notifications, and Claude Code then never registers its channel. Without the newer
// revisions the probe is refused and Claude Code falls back to initialize, the era in
// which channels work.
func ProtocolVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v > "2025-11-25" })
}

// Capabilities are the experimental capabilities of the initialize result.
func (s *Server) Capabilities() map[string]any {
	exp := map[string]any{CapabilityChannel: map[string]any{}}
	if s.permissions {
		exp[CapabilityPermission] = map[string]any{}
	}
	return exp
}

// Serve runs the channel over t (stdio for Claude Code) until the client leaves or ctx
// ends. The stream is followed once the client has initialized.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	requests := make(chan permissionRequest, 16)
	s.tap = &tapTransport{inner: t, requests: requests}
	s.tools = newToolProxy(s)
	failed := make(chan error, 1)
	var start sync.Once
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "signalgate", Title: "signalgate channel", Version: s.version}, &mcp.ServerOptions{
		Instructions:              s.instructions(),
		Logger:                    slog.New(warnings{s.log.Handler()}), // the SDK's session chatter is info
		SupportedProtocolVersions: ProtocolVersions(),
		Capabilities:              &mcp.ServerCapabilities{Experimental: s.Capabilities(), Tools: &mcp.ToolCapabilities{ListChanged: true}},
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
			start.Do(func() {
				go func() {
					f := &follower{s: s}
					if err := f.run(ctx); err != nil {
						failed <- err
					}
				}()
			})
		},
	})
	s.tools.load(ctx)
	session, err := s.mcp.Connect(ctx, s.tap, nil)
	if err != nil {
		return fmt.Errorf("start the MCP session: %w", err)
	}
	go s.relay(ctx, requests)
	waited := make(chan error, 1)
	go func() { waited <- session.Wait() }()
	select {
	case err := <-failed:
		_ = session.Close()
		return err
	case <-waited:
		return nil
	case <-ctx.Done():
		_ = session.Close()
		return nil
	}
}

func (s *Server) instructions() string {
	return fmt.Sprintf(`Events from signalgate for thread %q arrive as <channel> messages: GitHub, Slack, email and webhook notifications, as XML. `+
		`Their attributes carry the signal_id, priority, signal_source and the replyTo of where it came from. `+
		`Answer with the reply tool (replyTo as given; omit it to answer where the latest notification came from); `+
		`notification-inbox lists, searches and reads the thread's notifications; watch follows a pull request, issue or Slack thread. `+
		`The tools act on this thread unless told another resourceId and threadId.`, s.threadName)
}

// request builds an authenticated request to the gateway; body is sent as JSON.
func (s *Server) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// warnings keeps a handler's warnings and errors only.
type warnings struct{ slog.Handler }

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnings) WithAttrs(as []slog.Attr) slog.Handler { return warnings{h.Handler.WithAttrs(as)} }

func (h warnings) WithGroup(name string) slog.Handler { return warnings{h.Handler.WithGroup(name)} }
