package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agentapi"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/inboxmcp"
	"github.com/signalgate/signalgate/metrics"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/watch"
)

// Main is the running gateway: every service it owns, built from one Config. Tests
// build a Main the same way the command does.
//
// A config reload (reload.go) rebuilds what the config derives as a new generation
// (the HTTP routes on a new router, the connectors, agents' targets and APIs, watches,
// schedules, approvals, replies, retention) and swaps it in; the parts that hold work
// in flight are built once and only reconfigured: the store, the server's listener,
// the stream broker, the inbox, runs and the dispatcher.
type Main struct {
	Config *Config
	Log    *slog.Logger
	Now    func() time.Time
	// ConfigPath is the file a reload re-reads (SIGHUP, POST /-/reload), with Lookup
	// for its ${VAR}s; empty: reloads are refused.
	ConfigPath string
	Lookup     func(string) (string, bool)

	Store   *store.Store
	Inbox   *inbox.Service
	Server  *server.Server
	Metrics *metrics.Metrics
	Pollers []*email.Poller

	Broker     agent.Broker
	Runs       *agent.Runs
	Dispatcher *delivery.Dispatcher
	// Approvals is nil unless approvals.slack_connector is set.
	Approvals *approval.Service
	// Replies is the reply outbox; nil when no connector kind sends replies.
	Replies *reply.Service
	// Watches creates, lists and ends agents' watches.
	Watches *watch.Service
	// Schedules creates, changes and fires schedules; Scheduler fires them on time.
	Schedules *schedule.Service
	Scheduler *schedule.Scheduler
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

	addr  net.Addr
	grace time.Duration
	// sessionKey signs console sessions when console.session_key is unset: random per
	// process, so a reload does not sign everyone out.
	sessionKey secret.Secret
	kick       *delivery.Kick
	slots      *slotHub
	// The generation in force: its services start in order (front before the
	// dispatcher), its router serves, its routes and policy feed the dispatcher.
	front    []background // what runs beside the targets (presence followers): start before the dispatcher, stop after it
	services []background
	routes   map[string]delivery.Route
	policy   *inbox.Policy
	api      *agentapi.API
	router   *echo.Echo
	// slotFreed is the generation's approvals' subscriber to freed wake slots.
	slotFreed func(agentID string)

	follower *reloadFollower // nil unless on PostgreSQL
	reloadMu sync.Mutex      // one reload at a time
	running  []background    // started; stopped in reverse by Close
}

// background is a long-lived part (see package service) Main starts after the server
// and stops before closing the store.
type background interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// stopWait bounds each part's Stop so shutdown cannot hang on one of them.
const stopWait = 10 * time.Second

// base is the logger and clock every service is given.
func (m *Main) base() service.Base { return service.Base{Logger: m.Log, Now: m.Now} }

// NewMain prepares a gateway; Open starts it.
func NewMain(cfg *Config, log *slog.Logger) *Main {
	return &Main{Config: cfg, Log: log, Now: time.Now, Traces: telemetry.Off()}
}

// openStore opens the database for a command. On SQLite it holds the database's lock
// (one process writes a database file) unless opts say ReadAlongside.
func openStore(ctx context.Context, cfg *Config, log *slog.Logger, opts ...store.Option) (*store.Store, error) {
	return store.Open(ctx, cfg.Storage, log, opts...)
}

// Open connects the database, migrates, wires every component and starts serving.
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, m.Close())
		}
	}()
	cfg := m.Config
	m.grace = cfg.Server.ShutdownGrace // server.* never changes live
	if !telemetry.Enabled(m.Traces) {
		if m.tracing, err = telemetry.Setup(ctx, cfg.Telemetry, m.Lookup, buildVersion()); err != nil {
			return fmt.Errorf("telemetry: %w", err)
		}
		m.Traces = m.tracing.Provider
	}
	// A stored body decompresses to at most what a request may carry, and never less
	// than the default: lowering body_limit must not make older events unreadable.
	bodyLimit := store.WithBodyLimit(max(int64(cfg.Server.BodyLimit), store.DefaultBodyLimit))
	if m.Store, err = store.Open(ctx, cfg.Storage, m.Log, store.WithClock(m.Now), bodyLimit, store.WithTracing(m.Traces),
		store.WithRecoveryRules(cfg.recoveryRules())); err != nil {
		return err
	}
	st := m.Store
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
		m.Log.Warn("took back the leases of an earlier process", "component", "gateway",
			"threads", back.Threads, "replies", back.Replies, "schedules", back.Schedules)
	}
	policy, err := cfg.newPolicy()
	if err != nil {
		return err
	}
	m.Metrics = metrics.New(st, m.Log, metrics.WithLabels(cfg.metricLabels()))
	m.Metrics.WatchTargets(cfg.AgentIDs(), st, m.Log)

	// Agents: the thread log broker, the dispatcher's wake-up (told by the inbox, presence
	// followers and the APIs) and presence; the generation adds the targets that reach
	// agents and, the first time, the dispatcher that feeds threads.
	m.Broker = newBroker(cfg, st, m.Log)
	m.kick = delivery.NewKick()
	m.Runs = agent.NewRuns(st, m.Broker, cfg.Agents, agent.WithRunsClock(m.Now), agent.WithRunsLogger(m.Log))
	m.slots = &slotHub{}
	m.Runs.OnWakeSlotFreed(m.slots.freed)
	// Silences hold from memory: their Start reads them before the server serves (it starts
	// second, after the broker), then they are kept fresh on every replica; a local change
	// wakes the dispatcher to release.
	m.Silences = silence.NewService(st, cfg.Silences, m.base(), silence.WithChangeHook(func() { m.kick.Notify(nil) }))
	m.Inbox = inbox.NewService(st, policy, inbox.WithClock(m.Now), inbox.WithChangeHook(m.kick.Notify), inbox.WithSnoozes(st),
		inbox.WithHolds(m.Silences), inbox.WithHeldRecords(st),
		inbox.WithBudgetExceeded(func() { m.Metrics.ExpressionBudgetExceeded(metrics.PlacePolicy) }))
	m.Server = server.New(cfg.Server, m.Log, server.WithObserver(server.Observe(m.Metrics)), server.WithTracing(m.Traces))
	m.Server.Health(st.Ready)
	m.follower = m.followReloads()
	if m.sessionKey, err = randomSessionKey(); err != nil {
		return err
	}

	g, err := m.build(cfg, policy)
	if err != nil {
		return err
	}
	m.adopt(g)
	m.Server.Serve(m.router)

	addr, err := m.Server.Listen()
	if err != nil {
		return err
	}
	m.addr = addr
	for _, svc := range m.order() {
		if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start %s: %w", svc.Name(), err)
		}
		m.running = append(m.running, svc)
	}
	m.Server.Start()
	m.Metrics.ConfigLoaded(true, m.Now())
	m.Log.Info("serving", "component", "gateway", "addr", addr.String(), "storage", cfg.Storage.Driver,
		"agents", len(cfg.Agents), "routes", len(cfg.Routes))
	return nil
}

// build wires what cfg derives as a generation: a Main sharing m's long-lived parts,
// holding its own services (not started) and a router (not serving) with every route
// mounted. The first build also builds the dispatcher.
func (m *Main) build(cfg *Config, policy *inbox.Policy) (*Main, error) {
	g := &Main{Config: cfg, Log: m.Log, Now: m.Now, ConfigPath: m.ConfigPath, Lookup: m.Lookup,
		Store: m.Store, Inbox: m.Inbox, Silences: m.Silences, Metrics: m.Metrics, Broker: m.Broker, Runs: m.Runs, Dispatcher: m.Dispatcher,
		kick: m.kick, slots: m.slots, policy: policy, Traces: m.Traces}
	st, kick := g.Store, g.kick
	// Runtimes that report tool approvals (Mastra followers) do so through a relay the
	// approvals service, built once the parts it sends through exist, subscribes to.
	var relay *approval.Relay
	if cfg.Approvals.Enabled() {
		relay = approval.NewRelay()
	}
	// target.reply: auto queues runs' answers into the outbox, built further down.
	auto := &autoReplies{}
	built, err := cfg.buildTargets(targetBuild{runs: g.Runs, notify: kick.Notify, stream: agent.NewStreamTarget(),
		approvals: relay, replies: auto, state: st, log: g.Log, traces: g.Traces})
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	g.routes = built.routes
	if g.Dispatcher == nil {
		// The dispatcher subscribes to run opens to hand a new run the previous run's
		// unfinished signals (in-flight recovery).
		g.Dispatcher = delivery.New(st, g.Runs, g.Broker, g.routes, g.base(), cfg.Dispatch.options(
			delivery.WithSummaryInterval(policy.SummaryInterval()), delivery.WithDetailedSummaries(policy.SummaryFormat() == inbox.SummaryFormatDetailed),
			delivery.WithSecrets(cfg.Secrets()), delivery.WithObserver(g.Metrics), delivery.WithHealth(st),
			delivery.WithKick(kick), delivery.WithRecovery(g.Runs), delivery.WithStreamOptions(policy), delivery.WithSnoozes(g.Inbox),
			delivery.WithHolds(g.Inbox, g.holders()), delivery.WithTracerProvider(g.Traces),
			delivery.WithReplyProvenance(cfg.replyProvenance()))...)
	}
	// What runs beside the targets (presence followers) starts before the dispatcher and
	// stops after it.
	g.front = append(g.front, built.services...)
	runtimes := cfg.runtimeClients(httptarget.Traced(nil, g.Traces))

	// Approvals: sends decisions through an emitter on presence and the dispatcher and
	// posts through the Slack connectors' bot clients; it subscribes to the followers'
	// relay and to freed wake slots. The agent operations and Slack clicks ask it.
	if cfg.Approvals.Enabled() {
		slots := &genSlots{}
		g.Approvals = approval.New(cfg.Approvals, approval.Deps{Store: st, Places: st,
			Slack:   slack.NewMessenger(entries[slack.Config](cfg.Connectors, slack.Source), cfg.Approvals.GroupCacheTTL, g.Log, g.Now),
			Resumer: runtimes, Emitter: agent.NewEmitter(st, g.Runs, g.Dispatcher, g.Now),
			Relay: relay, Slots: slots, Base: g.base(), Traces: g.Traces})
		g.slotFreed = slots.h
		g.services = append(g.services, g.Approvals)
	}

	// Watches: what agents subscribe to at runtime; the sweep ends expired ones.
	g.Watches = watch.NewService(st, cfg.Watches, cfg.watchResources(), cfg.watchScope(build{repos: st}), g.Metrics.WrapIngester(g.Inbox), g.base())
	g.services = append(g.services, watch.NewSweep(st, g.Watches, cfg.Watches, g.base()))

	if err := g.openReplies(); err != nil {
		return nil, err
	}
	auto.s = g.Replies // set before any service starts

	e := m.Server.NewRouter()
	g.Server = m.Server
	e.GET("/metrics", echo.WrapHandler(g.Metrics.Handler()))
	// Runtimes post their own webhooks (presence, questions) to what their kinds mount.
	for _, p := range built.mounts {
		p.Mount(e)
	}

	agentDeps := agent.Deps{
		Frames: st, Runs: g.Runs, Inbox: g.Metrics.WrapIngester(g.Inbox),
		Records: st, States: st, Deliverer: g.Dispatcher, Notify: kick.Notify, Log: g.Log,
		Aborter: runtimes,
	}
	if g.Approvals != nil {
		agentDeps.Approvals = g.Approvals
	}
	agents, err := agent.NewService(cfg.Agents, agentDeps, agent.WithServiceClock(g.Now))
	if err != nil {
		return nil, err
	}
	apiOpts := []agentapi.Option{agentapi.WithLogger(g.Log), agentapi.WithShutdown(m.Server.Done()),
		agentapi.WithSubscriberGauge(g.Metrics.SubscriberDelta), agentapi.WithStreamLimit(cfg.Server.WithDefaults().MaxStreams())}
	if m.api != nil {
		apiOpts = append(apiOpts, agentapi.WithStreamsOf(m.api))
	}
	mcpOpts := []inboxmcp.Option{inboxmcp.WithLogger(g.Log), inboxmcp.WithVersion(version),
		inboxmcp.WithCallTimeout(cfg.Server.WithDefaults().RequestTimeout), inboxmcp.WithWatches(g.Watches), inboxmcp.WithPlaces(cfg.places())}
	apiOpts = append(apiOpts, agentapi.WithWatches(g.Watches))
	if g.Replies != nil {
		apiOpts = append(apiOpts, agentapi.WithReplies(g.Replies))
		mcpOpts = append(mcpOpts, inboxmcp.WithReplies(g.Replies))
	}
	// Schedules: each fire is a signal sent as POST …/signals sends it.
	g.Schedules = schedule.NewService(st, agents, cfg.AgentIDs(), g.base())
	g.Scheduler = schedule.NewScheduler(g.Schedules, cfg.Schedules, g.base())
	g.services = append(g.services, g.Scheduler)
	g.api = agentapi.New(agents, st, g.Broker, apiOpts...)
	g.api.Mount(e)
	inboxmcp.New(agents, mcpOpts...).Mount(e)
	parsers, err := g.mountConnectors(e)
	if err != nil {
		return nil, err
	}

	deps, err := adminDeps(cfg, st, policy, parsers, g.Log, g.Now,
		adminLive{Inbox: g.Metrics.WrapIngester(g.Inbox), Pollers: admin.AsPollers(g.Pollers), Notify: kick.Notify})
	if err != nil {
		return nil, err
	}
	if g.Replies != nil {
		deps.Replies = g.Replies
	}
	deps.Watches, deps.WatchEnder = st, g.Watches
	deps.Schedules = g.Schedules
	deps.Silences, deps.Holder = g.Silences, g.Silences
	adm, err := admin.New(cfg.Admin, deps)
	if err != nil {
		return nil, err
	}
	adm.Mount(e)
	e.POST(admin.ReloadPath, adm.Guard(admin.ScopeWrite, m.serveReload))
	con, err := console.New(m.consoleConfig(cfg), console.Deps{Admin: adm, Stream: g.api, Sessions: st, Tokens: cfg.Admin.Tokens,
		Agents: cfg.AgentIDs(), Connectors: deps.Connectors, Sources: deps.Sources, Places: deps.Places, Runtimes: built.runtimes,
		Log: g.Log, Now: g.Now})
	if err != nil {
		return nil, err
	}
	con.Mount(e)
	// A person opening the gateway's address in a browser gets the console.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, console.Prefix) })
	g.services = append(g.services, retention.New(cfg.Retention, st, g.base(), retention.WithObserver(g.Metrics.RetentionDeleted)))
	g.router = e
	return g, nil
}

// mountConnectors builds the ingest handlers and the pollers on one pipeline, and
// returns each source's parser for replay and explain.
func (m *Main) mountConnectors(e *echo.Echo) (admin.Parsers, error) {
	cfg, st := m.Config, m.Store
	router, err := cfg.Router()
	if err != nil {
		return nil, err
	}
	pipeline := connectors.NewPipeline(router, m.Metrics.WrapIngester(m.Inbox), m.Log,
		connectors.WithBudgetExceeded(func() { m.Metrics.ExpressionBudgetExceeded(metrics.PlaceRoute) }),
		connectors.WithWatches(st), connectors.WithClock(m.Now), connectors.WithSecretUsed(m.Metrics.SecretUsed))
	parsers, err := cfg.buildParsers(build{pipeline: pipeline, ci: github.NewStoreCIState(st, github.Source), log: m.Log, now: m.Now,
		approvals: m.Approvals, own: st, seen: st})
	if err != nil {
		return nil, err
	}
	return parsers, m.mountKinds(e, parsers, pipeline)
}

// openReplies builds the reply outbox over the senders of the kinds that have one; it
// starts with the other services and stops before the store closes.
func (m *Main) openReplies() error {
	cfg := m.Config
	senders, err := cfg.buildRepliers(build{log: m.Log, now: m.Now, own: m.Store})
	if err != nil {
		return err
	}
	if len(senders) == 0 {
		for i, a := range cfg.Agents {
			if a.Target.Reply == agent.ReplyAuto {
				return fmt.Errorf("agents[%d].target.reply: auto needs a connector that sends replies (a slack bot_token, a github token or app, an email smtp)", i)
			}
		}
		return nil
	}
	opts := []reply.Option{reply.WithMaxAge(cfg.Replies.MaxAge), reply.WithSecrets(cfg.Secrets()), reply.WithWatches(m.Watches),
		reply.WithTracerProvider(m.Traces), reply.WithProvenance(cfg.replyProvenance()), reply.WithPlaces(cfg.places())}
	if cfg.Replies.Lease > 0 {
		opts = append(opts, reply.WithLease(cfg.Replies.Lease))
	}
	if cfg.Replies.PollInterval > 0 {
		opts = append(opts, reply.WithPollInterval(cfg.Replies.PollInterval))
	}
	required := map[string]bool{}
	for _, a := range cfg.Agents {
		required[a.ID] = a.Replies.ApprovalRequired()
	}
	if m.Approvals != nil {
		opts = append(opts, reply.WithApprovals(m.Approvals, func(agent string) bool { return required[agent] }))
	}
	m.Replies = reply.New(m.Store, senders, m.base(), opts...)
	m.services = append(m.services, m.Replies)
	return nil
}

// emailPollers builds a poller per email connector on the pipeline.
func (m *Main) emailPollers(cfgs []email.Config, _ admin.Parser, pipeline *connectors.Pipeline) ([]background, error) {
	var out []background
	for _, ec := range cfgs {
		name := ec.Name
		poller, err := email.NewPoller(ec, pipeline, m.Store, m.base(), email.WithTracing(m.Traces), email.WithLock(mailboxLock(m.Config, m.Log)), email.WithOwn(m.Store), email.WithHooks(email.Hooks{
			Polled:       func(_ string, _ int, err error) { m.Metrics.IMAPPoll(name, err) },
			Disconnected: func(string, error) { m.Metrics.IMAPError(name) },
		}))
		if err != nil {
			return nil, err
		}
		m.Pollers = append(m.Pollers, poller)
		out = append(out, poller)
	}
	return out, nil
}

// metricLabels lists the sources and names metrics may carry: the connector kinds and the
// agent API, configured connectors and agents.
func (c *Config) metricLabels() metrics.Labels {
	l := metrics.Labels{Sources: append(c.sources(), agent.APISource)}
	c.Connectors.each(func(k integration, list any) { l.Connectors = append(l.Connectors, k.names(list)...) })
	return metrics.Labels{Sources: l.Sources, Connectors: append(l.Connectors, c.AgentIDs()...)}
}

// Addr is the bound listen address.
func (m *Main) Addr() net.Addr { return m.addr }

// Close stops accepting, lets in-flight requests finish within the grace period,
// stops workers and closes the database.
func (m *Main) Close() error {
	var errs []error
	// The reload follower first: a reload it runs would wait for the lock taken below.
	if m.follower != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		errs = append(errs, m.follower.Stop(ctx))
		cancel()
	}
	// Stop background services (pollers, socket clients, dispatcher) after the HTTP
	// server so in-flight requests can still finish against them.
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.grace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
		m.Server = nil
	}
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	for i := len(m.running) - 1; i >= 0; i-- {
		svc := m.running[i]
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		if err := svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", svc.Name(), err))
		}
		cancel()
	}
	m.running, m.services = nil, nil
	// Every part has stopped, so its last spans have ended: send them.
	if m.tracing != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		errs = append(errs, m.tracing.Shutdown(ctx))
		cancel()
		m.tracing = nil
	}
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
func (m *Main) holders() inbox.Holder {
	inb := m.Inbox
	return inbox.Holders{m.Silences, inbox.HolderFunc(func(s inbox.Subject, now time.Time) (inbox.Hold, bool) {
		return inb.Policy().Held(s, now)
	})}
}
