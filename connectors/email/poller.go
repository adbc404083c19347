package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/cenkalti/backoff/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
)

// Pipeline routes one message's items and stores its event; *connectors.Pipeline
// satisfies it, so routing and event storage match the other connectors.
type Pipeline interface {
	Ingest(ctx context.Context, ev *inbox.Event, items []connectors.Item) (connectors.Outcome, error)
}

// CursorStore reads the mailbox cursors the inbox saves with each event
// (inbox.Event.Checkpoint); *store.DB satisfies it.
type CursorStore interface {
	ConnectorState(ctx context.Context, connector, key string) (value string, ok bool, err error)
	SetConnectorState(ctx context.Context, connector, key, value string) error
}

// Lock answers "may this replica poll this mailbox now?". With several replicas on
// one database, an advisory lock makes one of them the poller; TryLock must not block.
type Lock interface {
	TryLock(ctx context.Context, key string) (release func(), ok bool, err error)
}

// NoLock always says yes: one process polls every mailbox.
type NoLock struct{}

// TryLock always succeeds.
func (NoLock) TryLock(context.Context, string) (func(), bool, error) { return func() {}, true, nil }

// Hooks observe a worker; tests synchronise on them. They run on the worker's
// goroutine and must not block.
type Hooks struct {
	// Polled follows each fetch cycle: how many messages were committed, and the
	// cycle's error (nil when it completed).
	Polled func(mailbox string, stored int, err error)
	// Idling follows the server's acknowledgement of IDLE.
	Idling func(mailbox string)
	// Disconnected follows the end of a session by error, before the backoff wait.
	Disconnected func(mailbox string, err error)
}

// Option configures a Poller.
type Option func(*Poller)

// WithBackoff replaces the reconnect backoff (exponential with jitter, 1s to 5m).
// The function is called once per mailbox worker.
func WithBackoff(newBackOff func() backoff.BackOff) Option {
	return func(p *Poller) { p.newBackoff = newBackOff }
}

// WithLock plugs in a multi-replica lock; the default is NoLock.
func WithLock(l Lock) Option { return func(p *Poller) { p.lock = l } }

// WithHooks installs observers.
func WithHooks(h Hooks) Option { return func(p *Poller) { p.hooks = h } }

// WithOwn recognises the gateway's own replies coming back (a copy in a polled
// mailbox, a list echo) by their recorded Message-IDs: such messages are stored
// ignored with reason reply.OwnReason, before any other rule.
func WithOwn(o reply.Own) Option { return func(p *Poller) { p.own = o } }

// WithTLSConfig sets the base TLS config (custom roots, client certificates);
// ServerName and insecure_skip_verify are still applied from the connector config.
func WithTLSConfig(c *tls.Config) Option { return func(p *Poller) { p.tlsBase = c.Clone() } }

// Poller polls the mailboxes of one email connector, one worker goroutine and IMAP
// connection per mailbox.
type Poller struct {
	cfg        Config
	after      string // none, seen or move
	moveTo     string
	pipeline   Pipeline
	cursors    CursorStore
	log        *slog.Logger
	now        func() time.Time
	newBackoff func() backoff.BackOff
	lock       Lock
	hooks      Hooks
	tlsBase    *tls.Config
	own        reply.Own
	tracer     trace.Tracer // nil: tracing off
	workers    []*worker

	service.StartStop
}

// NewPoller validates cfg and builds a stopped poller.
func NewPoller(cfg Config, pipeline Pipeline, cursors CursorStore, base service.Base, opts ...Option) (*Poller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if pipeline == nil || cursors == nil {
		return nil, errors.New("email poller: a pipeline and a cursor store are required")
	}
	cfg = cfg.WithDefaults()
	after, moveTo, _ := parseAfterIngest(cfg.AfterIngest)
	base = base.Component("connector_email", "connector", cfg.Name)
	p := &Poller{
		cfg: cfg, after: after, moveTo: moveTo, pipeline: pipeline, cursors: cursors,
		log:        base.Logger,
		now:        base.Now,
		newBackoff: defaultBackoff,
		lock:       NoLock{},
	}
	for _, o := range opts {
		o(p)
	}
	for _, m := range cfg.Mailboxes {
		p.workers = append(p.workers, newWorker(p, m))
	}
	return p, nil
}

func defaultBackoff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = time.Second
	b.MaxInterval = 5 * time.Minute
	b.Multiplier = 2
	b.RandomizationFactor = 0.5
	return b
}

// Name is the connector's configured name.
func (p *Poller) Name() string { return p.cfg.Name }

// StateConnector is the connector key of the cursors in the connector state
// ("email/<name>"); the key is the mailbox name.
func (p *Poller) StateConnector() string { return Source + "/" + p.cfg.Name }

// Start launches one worker per mailbox. They run until Stop, or until ctx ends.
func (p *Poller) Start(ctx context.Context) error {
	workers := make([]func(context.Context), 0, len(p.workers))
	for _, w := range p.workers {
		workers = append(workers, w.run)
	}
	if err := p.StartStop.Start(ctx, workers...); err != nil {
		return fmt.Errorf("email connector %q: %w", p.cfg.Name, err)
	}
	if p.cfg.InsecureSkipVerify {
		p.log.Warn("insecure_skip_verify is set: the IMAP server certificate is not checked (test servers only)")
	}
	if p.cfg.plaintextRemote() {
		p.log.Warn("IMAP without TLS to a non-loopback host: the password and mail cross the network in clear",
			"addr", p.cfg.Addr)
	}
	p.log.Info("email connector started", "addr", p.cfg.Addr, "mailboxes", p.cfg.Mailboxes,
		"idle", p.cfg.useIdle(), "after_ingest", p.cfg.AfterIngest)
	return nil
}

// Stop ends the workers and waits for them, or for ctx. A message being stored
// when Stop is called is either committed or not: its cursor says which.
func (p *Poller) Stop(ctx context.Context) error {
	if !p.Running() {
		return nil
	}
	if err := p.StartStop.Stop(ctx); err != nil {
		return fmt.Errorf("email connector %q: stop: %w", p.cfg.Name, err)
	}
	p.log.Info("email connector stopped")
	return nil
}

// PollNow asks every worker to fetch at once instead of waiting for new mail or
// the poll interval (an admin "poll now"; a worker that is reconnecting ignores it).
func (p *Poller) PollNow() {
	for _, w := range p.workers {
		select {
		case w.pollNow <- struct{}{}:
		default:
		}
	}
}

// State is where a mailbox worker is.
type State string

// Worker states.
const (
	StateStopped    State = "stopped"
	StateStandby    State = "standby" // another replica holds the mailbox lock
	StateConnecting State = "connecting"
	StateSyncing    State = "syncing"
	StateIdle       State = "idle"    // connected, IDLE running
	StateWaiting    State = "waiting" // connected, polling without IDLE
	StateBackoff    State = "backoff" // disconnected, waiting to reconnect
)

// Connected reports a logged-in session with the mailbox selected.
func (s State) Connected() bool { return s == StateSyncing || s == StateIdle || s == StateWaiting }

// Status is the connector's health for the admin API.
type Status struct {
	Connector string          `json:"connector"`
	Addr      string          `json:"addr"`
	Running   bool            `json:"running"`
	Mailboxes []MailboxStatus `json:"mailboxes"`
}

// MailboxStatus is one mailbox worker's health and cursor.
type MailboxStatus struct {
	Mailbox     string    `json:"mailbox"`
	State       State     `json:"state"`
	Connected   bool      `json:"connected"`
	IdleActive  bool      `json:"idleActive"`
	LastPoll    time.Time `json:"lastPoll,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	UIDValidity uint32    `json:"uidValidity,omitempty"`
	LastUID     uint32    `json:"lastUid,omitempty"`
	// Stored counts messages committed since start, duplicates included.
	Stored     int64 `json:"stored"`
	Reconnects int64 `json:"reconnects"`
}

// Status returns a snapshot.
func (p *Poller) Status() Status {
	running := p.Running()
	st := Status{Connector: p.cfg.Name, Addr: p.cfg.Addr, Running: running}
	for _, w := range p.workers {
		st.Mailboxes = append(st.Mailboxes, w.status())
	}
	return st
}

func (p *Poller) tlsConfig() *tls.Config {
	return tlsFor(p.tlsBase, p.cfg.Addr, p.cfg.InsecureSkipVerify)
}

// tlsFor is base (or TLS 1.2 at least) for a server at addr, checked by its host
// name unless insecure.
func tlsFor(base *tls.Config, addr string, insecure bool) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		c = base.Clone()
	}
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
	}
	if insecure {
		c.InsecureSkipVerify = true
	}
	return c
}
