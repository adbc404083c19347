// Package gateway is signalgate as a library: config.yaml (Config, LoadConfig), the
// tables of integration kinds (kinds.go) and of target kinds (targets.go), and the
// gateway they wire. A Gateway holds the long-lived parts, built once: the store, the
// server's listener, the stream broker, the inbox, runs, silences and the dispatcher.
// A Generation holds what one config derives: the agents' targets and routes, the
// connectors, the agent API and MCP, approvals, watches, schedules, replies, retention
// and the router serving them; a reload builds the next one and swaps it in. Package
// cli is the command line over it.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/metrics"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/telemetry"
)

// Gateway is the running gateway: the parts that hold work in flight, built once by
// Open and only reconfigured by a reload (the store, the server's listener, the stream
// broker, the inbox, runs, silences and the dispatcher), and the Generation in force.
// Tests build a Gateway the same way the command does.
type Gateway struct {
	Log *slog.Logger
	Now func() time.Time
	// ConfigPath is the file a reload re-reads (SIGHUP, POST /-/reload), with Lookup
	// for its ${VAR}s; empty: reloads are refused.
	ConfigPath string
	Lookup     func(string) (string, bool)
	// Version is the build's version, "dev" for a development build: the traces'
	// service version and the one MCP reports.
	Version string

	Store   *store.DB
	Inbox   *inbox.Service
	Server  *server.Server
	Metrics *metrics.Metrics

	Broker agent.Broker
	Runs   *agent.Runs
	// Dispatcher feeds threads; built with the first generation's routes, a reload
	// reconfigures it.
	Dispatcher *delivery.Dispatcher
	// Silences makes, lists and expires silences and holds what they match.
	Silences *silence.Service
	// Traces is the tracer provider every component is given: telemetry.Off() unless
	// tracing is configured (the telemetry: block or the OTEL_* variables read through
	// Lookup); Open sets it up unless a provider was given before.
	Traces  trace.TracerProvider
	tracing *telemetry.Tracing // flushed by Close; nil unless Open set Traces up

	// TestSignals are where tests wait; see service.Signal.
	TestSignals struct {
		Reloaded service.Signal[error] // a reload ended (nil: in force)
	}

	// config is the config Open builds the first generation from.
	config *Config
	// gen is the generation in force: its services start in order (front before the
	// dispatcher), its router serves, its routes and policy feed the dispatcher.
	gen   atomic.Pointer[Generation]
	addr  net.Addr
	grace time.Duration
	// sessionKey signs console sessions when console.session_key is unset: random per
	// process, so a reload does not sign everyone out.
	sessionKey secret.Secret
	kick       *delivery.Kick
	slots      *slotHub

	follower *reloadFollower // nil unless on PostgreSQL
	reloadMu sync.Mutex      // one reload at a time
	running  []background    // started; stopped in reverse by Close
}

// background is a long-lived part (see package service) the Gateway starts after the
// server and stops before closing the store.
type background interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// stopWait bounds each part's Stop so shutdown cannot hang on one of them.
const stopWait = 10 * time.Second

// base is the logger and clock every service is given.
func (gw *Gateway) base() service.Base { return service.Base{Logger: gw.Log, Now: gw.Now} }

// New prepares a gateway for cfg; Open starts it.
func New(cfg *Config, log *slog.Logger) *Gateway {
	return &Gateway{config: cfg, Log: log, Now: time.Now, Traces: telemetry.Off(), Version: devVersion}
}

// devVersion is the version of a development build.
const devVersion = "dev"

// buildVersion is the version stamped at build time, "" for a development build.
func (gw *Gateway) buildVersion() string {
	if gw.Version == devVersion {
		return ""
	}
	return gw.Version
}

// Config is the config in force: the one the gateway was made with until Open, then
// its generation's (a reload changes it).
func (gw *Gateway) Config() *Config {
	if g := gw.gen.Load(); g != nil {
		return g.Config
	}
	return gw.config
}

// Generation is the generation in force; nil until Open built it.
func (gw *Gateway) Generation() *Generation { return gw.gen.Load() }

// Migrate applies cfg's database migrations and returns the schema version.
func Migrate(ctx context.Context, cfg *Config, log *slog.Logger) (int64, error) {
	st, err := store.Open(ctx, cfg.Storage, log)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.Migrate(ctx)
}

// Open connects the database, migrates, wires every component and starts serving.
func (gw *Gateway) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, gw.Close())
		}
	}()
	cfg := gw.config
	gw.grace = cfg.Server.ShutdownGrace // server.* never changes live
	if !telemetry.Enabled(gw.Traces) {
		if gw.tracing, err = telemetry.Setup(ctx, cfg.Telemetry, gw.Lookup, gw.buildVersion()); err != nil {
			return fmt.Errorf("telemetry: %w", err)
		}
		gw.Traces = gw.tracing.Provider
	}
	// A stored body decompresses to at most what a request may carry, and never less
	// than the default: lowering body_limit must not make older events unreadable.
	bodyLimit := store.WithBodyLimit(max(int64(cfg.Server.BodyLimit), store.DefaultBodyLimit))
	if gw.Store, err = store.Open(ctx, cfg.Storage, gw.Log, store.WithClock(gw.Now), bodyLimit, store.WithTracing(gw.Traces),
		store.WithRecoveryRules(cfg.recoveryRules())); err != nil {
		return err
	}
	st := gw.Store
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	// SQLite: this process holds the database alone, so whatever an earlier one (killed,
	// crashed) leased goes out now rather than when its leases lapse.
	back, err := st.TakeBackLeases(ctx)
	if err != nil {
		return err
	}
	if back.Total() > 0 {
		gw.Log.Warn("took back the leases of an earlier process", "component", "gateway",
			"threads", back.Threads, "replies", back.Replies, "schedules", back.Schedules)
	}
	policy, err := cfg.newPolicy()
	if err != nil {
		return err
	}
	gw.Metrics = metrics.New(store.NewGauges(st), gw.Log, metrics.WithLabels(cfg.metricLabels()))
	gw.Metrics.WatchTargets(cfg.AgentIDs(), store.NewTargets(st), gw.Log)

	// Agents: the thread log broker, the dispatcher's wake-up (told by the inbox, presence
	// followers and the APIs) and presence; the generation adds the targets that reach
	// agents and, the first time, the dispatcher that feeds threads.
	gw.Broker = newBroker(cfg, st, gw.Log)
	gw.kick = delivery.NewKick()
	gw.Runs = agent.NewRuns(store.NewRuns(st), gw.Broker, cfg.Agents, agent.WithRunsClock(gw.Now), agent.WithRunsLogger(gw.Log))
	gw.slots = &slotHub{}
	gw.Runs.OnWakeSlotFreed(gw.slots.freed)
	// Silences hold from memory: their Start reads them before the server serves (it starts
	// second, after the broker), then they are kept fresh on every replica; a local change
	// wakes the dispatcher to release.
	gw.Silences = silence.NewService(store.NewSilences(st), cfg.Silences, gw.base(), silence.WithChangeHook(func() { gw.kick.Notify(nil) }))
	gw.Inbox = inbox.NewService(store.NewInbox(st), policy, inbox.WithClock(gw.Now), inbox.WithChangeHook(gw.kick.Notify), inbox.WithSnoozes(store.NewInbox(st)),
		inbox.WithHolds(gw.Silences), inbox.WithHeldRecords(store.NewInbox(st)),
		inbox.WithBudgetExceeded(func() { gw.Metrics.ExpressionBudgetExceeded(metrics.PlacePolicy) }))
	gw.Server = server.New(cfg.Server, gw.Log, server.WithObserver(server.Observe(gw.Metrics)), server.WithTracing(gw.Traces))
	gw.Server.Health(st.Ready)
	gw.follower = gw.followReloads()
	if gw.sessionKey, err = randomSessionKey(); err != nil {
		return err
	}

	g, err := gw.build(cfg, policy)
	if err != nil {
		return err
	}
	gw.adopt(g)
	gw.Server.Serve(g.router)

	addr, err := gw.Server.Listen()
	if err != nil {
		return err
	}
	gw.addr = addr
	for _, svc := range gw.order() {
		if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start %s: %w", svc.Name(), err)
		}
		gw.running = append(gw.running, svc)
	}
	gw.Server.Start()
	gw.Metrics.ConfigLoaded(true, gw.Now())
	gw.Log.Info("serving", "component", "gateway", "addr", addr.String(), "storage", cfg.Storage.Driver,
		"agents", len(cfg.Agents), "routes", len(cfg.Routes))
	return nil
}

// newDispatcher builds the dispatcher over the first generation's routes. It subscribes
// to run opens to hand a new run the previous run's unfinished signals (in-flight
// recovery).
func (gw *Gateway) newDispatcher(cfg *Config, policy *inbox.Policy, routes map[string]delivery.Route) *delivery.Dispatcher {
	st := gw.Store
	return delivery.New(store.NewQueue(st), gw.Runs, gw.Broker, routes, gw.base(), cfg.Dispatch.options(
		delivery.WithSummaryInterval(policy.SummaryInterval()), delivery.WithDetailedSummaries(policy.SummaryFormat() == inbox.SummaryFormatDetailed),
		delivery.WithSecrets(cfg.Secrets()), delivery.WithObserver(gw.Metrics), delivery.WithHealth(store.NewTargets(st)),
		delivery.WithKick(gw.kick), delivery.WithRecovery(gw.Runs), delivery.WithStreamOptions(policy), delivery.WithSnoozes(gw.Inbox),
		delivery.WithHolds(gw.Inbox, gw.holders()), delivery.WithTracerProvider(gw.Traces),
		delivery.WithReplyProvenance(cfg.replyProvenance()))...)
}

// metricLabels lists the sources and names metrics may carry: the connector kinds and the
// agent API, configured connectors and agents.
func (c *Config) metricLabels() metrics.Labels {
	l := metrics.Labels{Sources: append(c.sources(), agent.APISource)}
	c.Connectors.each(func(k integration, list any) { l.Connectors = append(l.Connectors, k.names(list)...) })
	return metrics.Labels{Sources: l.Sources, Connectors: append(l.Connectors, c.AgentIDs()...)}
}

// Addr is the bound listen address.
func (gw *Gateway) Addr() net.Addr { return gw.addr }

// Close stops accepting, lets in-flight requests finish within the grace period,
// stops workers and closes the database.
func (gw *Gateway) Close() error {
	var errs []error
	// The reload follower first: a reload it runs would wait for the lock taken below.
	if gw.follower != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		errs = append(errs, gw.follower.Stop(ctx))
		cancel()
	}
	// Stop background services (pollers, socket clients, dispatcher) after the HTTP
	// server so in-flight requests can still finish against them.
	if gw.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), gw.grace)
		errs = append(errs, gw.Server.Shutdown(ctx))
		cancel()
		gw.Server = nil
	}
	gw.reloadMu.Lock()
	defer gw.reloadMu.Unlock()
	for i := len(gw.running) - 1; i >= 0; i-- {
		svc := gw.running[i]
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		if err := svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", svc.Name(), err))
		}
		cancel()
	}
	gw.running = nil
	// Every part has stopped, so its last spans have ended: send them.
	if gw.tracing != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		errs = append(errs, gw.tracing.Shutdown(ctx))
		cancel()
		gw.tracing = nil
	}
	errs = append(errs, gw.closeStore())
	return errors.Join(errs...)
}

func (gw *Gateway) closeStore() error {
	if gw.Store == nil {
		return nil
	}
	err := gw.Store.Close()
	gw.Store = nil
	return err
}

// autoReplies hands the runtimes that answer by themselves (target.reply: auto) the
// outbox, which is built after them (it needs the approvals service, which needs the
// dispatcher, which needs their targets).
type autoReplies struct{ s *reply.Service }

func (a *autoReplies) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	if a.s == nil {
		return reply.Reply{}, fmt.Errorf("%w: no connector of this gateway sends replies", reply.ErrUnknownPlace)
	}
	return a.s.Queue(ctx, k, req)
}

// holders are what the dispatcher asks when a record falls due: the live silences, then
// the muting intervals of the policy in force (a reload swaps it).
func (gw *Gateway) holders() inbox.Holder {
	inb := gw.Inbox
	return inbox.Holders{gw.Silences, inbox.HolderFunc(func(s inbox.Subject, now time.Time) (inbox.Hold, bool) {
		return inb.Policy().Held(s, now)
	})}
}
