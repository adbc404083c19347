package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/metrics"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
)

// Main is the running gateway: every service it owns, built from one Config. Tests
// build a Main the same way the command does.
type Main struct {
	Config *Config
	Log    *slog.Logger
	Now    func() time.Time

	Store   *store.Store
	Inbox   *inbox.Service
	Server  *server.Server
	Metrics *metrics.Metrics
	Pollers []*email.Poller

	addr     net.Addr
	services []service
}

// service is a background component Main starts after the server and stops before
// closing the store.
type service interface {
	Name() string
	Start(ctx context.Context) error
	Stop() error
}

// NewMain prepares a gateway; Open starts it.
func NewMain(cfg *Config, log *slog.Logger) *Main {
	return &Main{Config: cfg, Log: log, Now: time.Now}
}

func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (*store.Store, error) {
	return store.Open(ctx, cfg.Storage, log)
}

// Open connects the database, migrates, wires every component and starts serving.
func (m *Main) Open(ctx context.Context) error {
	cfg := m.Config
	st, err := store.Open(ctx, cfg.Storage, m.Log, store.WithClock(m.Now))
	if err != nil {
		return err
	}
	m.Store = st
	if _, err := st.Migrate(ctx); err != nil {
		return errors.Join(err, m.closeStore())
	}
	policy, err := inbox.NewPolicy(cfg.Policy)
	if err != nil {
		return errors.Join(fmt.Errorf("policy: %w", err), m.closeStore())
	}
	m.Inbox = inbox.NewService(st, policy, inbox.WithClock(m.Now))
	m.Metrics = metrics.New(st, m.Log)

	m.Server = server.New(cfg.Server, m.Log)
	e := m.Server.Echo()
	e.Use(m.Metrics.Middleware())
	m.Server.Health(st.Ready)
	e.GET("/metrics", m.Metrics.Handler())

	router, err := connectors.NewRouter(cfg.Routes, cfg.AgentIDs())
	if err != nil {
		return errors.Join(err, m.closeStore())
	}
	pipeline := connectors.NewPipeline(router, m.Metrics.WrapIngester(m.Inbox), m.Log)
	gh, err := github.NewHandler(cfg.Connectors.GitHub, pipeline, m.Log, m.Now,
		github.WithCIState(github.NewStoreCIState(st, "github")))
	if err != nil {
		return errors.Join(err, m.closeStore())
	}
	gh.Mount(e)
	sl, err := slack.NewHandler(cfg.Connectors.Slack, pipeline, m.Log, m.Now)
	if err != nil {
		return errors.Join(err, m.closeStore())
	}
	sl.Mount(e)
	m.services = append(m.services, socketClients(sl.SocketClients())...)
	gen, err := generic.NewHandler(cfg.Connectors.Generic, pipeline, m.Log, m.Now)
	if err != nil {
		return errors.Join(err, m.closeStore())
	}
	gen.Mount(e)
	for _, ec := range cfg.Connectors.Email {
		poller, err := email.NewPoller(ec, pipeline, st, m.Log, email.WithClock(m.Now))
		if err != nil {
			return errors.Join(err, m.closeStore())
		}
		m.Pollers = append(m.Pollers, poller)
		m.services = append(m.services, serviceFuncs{
			name:  "email poller " + ec.Name,
			start: poller.Start,
			stop: func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				return poller.Stop(ctx)
			},
		})
	}

	addr, err := m.Server.Listen()
	if err != nil {
		return errors.Join(err, m.closeStore())
	}
	m.addr = addr
	m.Server.Start()
	for _, svc := range m.services {
		if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
			return errors.Join(fmt.Errorf("start %s: %w", svc.Name(), err), m.Close())
		}
	}
	m.Log.Info("serving", "component", "gateway", "addr", addr.String(), "storage", cfg.Storage.Driver,
		"agents", len(cfg.Agents), "routes", len(cfg.Routes))
	return nil
}

// Addr is the bound listen address.
func (m *Main) Addr() net.Addr { return m.addr }

// Close stops accepting, lets in-flight requests finish within the grace period,
// stops workers and closes the database.
func (m *Main) Close() error {
	var errs []error
	// Stop background services (pollers, socket clients, dispatcher) after the HTTP
	// server so in-flight requests can still finish against them.
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.Server.ShutdownGrace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
		m.Server = nil
	}
	for i := len(m.services) - 1; i >= 0; i-- {
		errs = append(errs, m.services[i].Stop())
	}
	m.services = nil
	errs = append(errs, m.closeStore())
	return errors.Join(errs...)
}

func (m *Main) closeStore() error {
	if m.Store == nil {
		return nil
	}
	err := m.Store.Close()
	m.Store = nil
	return err
}

// serviceFuncs adapts components whose Start/Stop signatures differ.
type serviceFuncs struct {
	name  string
	start func(context.Context) error
	stop  func() error
}

func (s serviceFuncs) Name() string                    { return s.name }
func (s serviceFuncs) Start(ctx context.Context) error { return s.start(ctx) }
func (s serviceFuncs) Stop() error                     { return s.stop() }

func socketClients(clients []*slack.SocketClient) []service {
	out := make([]service, 0, len(clients))
	for _, c := range clients {
		out = append(out, serviceFuncs{
			name:  "slack socket mode " + c.Name(),
			start: func(ctx context.Context) error { c.Start(ctx); return nil },
			stop:  func() error { c.Stop(); return nil },
		})
	}
	return out
}
