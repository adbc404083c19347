package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/agent/agentapi"
	"github.com/signalgate/signalgate/agent/inboxmcp"
	"github.com/signalgate/signalgate/agent/mastra"
	"github.com/signalgate/signalgate/agent/targets"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/metrics"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/watch"
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

	addr     net.Addr
	services []background // built by Open, started in order
	running  []background // started; stopped in reverse by Close
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
	return &Main{Config: cfg, Log: log, Now: time.Now}
}

func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (*store.Store, error) {
	return store.Open(ctx, cfg.Storage, log)
}

// Open connects the database, migrates, wires every component and starts serving.
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, m.Close())
		}
	}()
	cfg := m.Config
	if m.Store, err = store.Open(ctx, cfg.Storage, m.Log, store.WithClock(m.Now)); err != nil {
		return err
	}
	st := m.Store
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	policy, err := cfg.newPolicy()
	if err != nil {
		return err
	}
	m.Metrics = metrics.New(st, m.Log, metrics.WithLabels(cfg.metricLabels()))
	m.Metrics.WatchTargets(cfg.AgentIDs(), st, m.Log)

	// Agents: the thread log broker, the dispatcher's wake-up (told by the inbox, presence
	// followers and the APIs), presence, the targets that reach agents, and the dispatcher
	// that feeds threads. The dispatcher subscribes to run opens to hand a new run the
	// previous run's unfinished signals (in-flight recovery).
	m.Broker = newBroker(cfg, st, m.Log)
	kick := delivery.NewKick()
	// Mastra followers report tool approvals through a relay the approvals service,
	// built once the parts it sends through exist, subscribes to.
	var follow []mastra.FollowerOption
	var relay *approval.Relay
	if cfg.Approvals.Enabled() {
		relay = approval.NewRelay()
		follow = append(follow, mastra.WithApprovals(relay))
	}
	// target.reply: auto queues runs' answers into the outbox, built further down.
	auto := &autoReplies{}
	follow = append(follow, mastra.WithReplies(auto))
	m.Runs = agent.NewRuns(st, m.Broker, cfg.Agents, agent.WithRunsClock(m.Now), agent.WithRunsLogger(m.Log))
	routes, targetServices, err := targets.Routes(cfg.Agents, m.Runs, agent.NewStreamTarget(), kick.Notify, m.Log, follow...)
	if err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	// Silences hold from memory: read before anything is served, then kept fresh by their
	// service on every replica; a local change wakes the dispatcher to release.
	m.Silences = silence.NewService(st, cfg.Silences, m.base(), silence.WithChangeHook(func() { kick.Notify(nil) }))
	if err := m.Silences.Refresh(ctx); err != nil {
		return err
	}
	m.Inbox = inbox.NewService(st, policy, inbox.WithClock(m.Now), inbox.WithChangeHook(kick.Notify), inbox.WithSnoozes(st),
		inbox.WithHolds(m.Silences), inbox.WithHeldRecords(st),
		inbox.WithBudgetExceeded(func() { m.Metrics.ExpressionBudgetExceeded(metrics.PlacePolicy) }))
	m.Dispatcher = delivery.New(st, m.Runs, m.Broker, routes, m.base(), cfg.Dispatch.options(
		delivery.WithSummaryInterval(policy.SummaryInterval()), delivery.WithDetailedSummaries(policy.SummaryFormat() == inbox.SummaryFormatDetailed),
		delivery.WithSecrets(cfg.Secrets()), delivery.WithObserver(m.Metrics), delivery.WithHealth(st),
		delivery.WithKick(kick), delivery.WithRecovery(m.Runs), delivery.WithStreamOptions(policy), delivery.WithSnoozes(m.Inbox),
		delivery.WithHolds(m.Inbox, m.Silences))...)
	m.services = append(m.services, m.Broker, m.Silences)
	// Mastra presence followers start before the dispatcher and stop after it.
	for _, s := range targetServices {
		m.services = append(m.services, s)
	}
	m.services = append(m.services, m.Dispatcher)

	// Approvals: sends decisions through an emitter on presence and the dispatcher and
	// posts through the Slack connectors' bot clients; it subscribes to the followers'
	// relay and to freed wake slots. The agent operations and Slack clicks ask it.
	if cfg.Approvals.Enabled() {
		m.Approvals = approval.New(cfg.Approvals, approval.Deps{Store: st, Places: st,
			Slack:   slack.NewMessenger(entries[slack.Config](cfg.Connectors, slack.Source), cfg.Approvals.GroupCacheTTL, m.Log, m.Now),
			Resumer: mastra.NewToolApprovals(cfg.Agents, nil), Emitter: agent.NewEmitter(st, m.Runs, m.Dispatcher, m.Now),
			Relay: relay, Slots: m.Runs, Base: m.base()})
		m.services = append(m.services, m.Approvals)
	}

	// Watches: what agents subscribe to at runtime; the sweep ends expired ones.
	m.Watches = watch.NewService(st, cfg.Watches, cfg.watchScope(st), m.Metrics.WrapIngester(m.Inbox), m.base())
	m.services = append(m.services, watch.NewSweep(st, m.Watches, cfg.Watches, m.base()))

	if err := m.openReplies(); err != nil {
		return err
	}
	auto.s = m.Replies // set before any service starts

	m.Server = server.New(cfg.Server, m.Log, server.WithObserver(server.Observe(m.Metrics)))
	e := m.Server.Echo()
	m.Server.Health(st.Ready)
	e.GET("/metrics", echo.WrapHandler(m.Metrics.Handler()))

	agentDeps := agent.Deps{
		Frames: st, Runs: m.Runs, Inbox: m.Metrics.WrapIngester(m.Inbox),
		Records: st, States: st, Deliverer: m.Dispatcher, Notify: kick.Notify, Log: m.Log,
		Aborter: mastra.NewClient(cfg.Agents, nil),
	}
	if m.Approvals != nil {
		agentDeps.Approvals = m.Approvals
	}
	agents, err := agent.NewService(cfg.Agents, agentDeps, agent.WithServiceClock(m.Now))
	if err != nil {
		return err
	}
	apiOpts := []agentapi.Option{agentapi.WithLogger(m.Log), agentapi.WithShutdown(m.Server.Done()),
		agentapi.WithSubscriberGauge(m.Metrics.SubscriberDelta), agentapi.WithStreamLimit(cfg.Server.WithDefaults().MaxStreams())}
	mcpOpts := []inboxmcp.Option{inboxmcp.WithLogger(m.Log), inboxmcp.WithVersion(version),
		inboxmcp.WithCallTimeout(cfg.Server.WithDefaults().RequestTimeout), inboxmcp.WithWatches(m.Watches)}
	apiOpts = append(apiOpts, agentapi.WithWatches(m.Watches))
	if m.Replies != nil {
		apiOpts = append(apiOpts, agentapi.WithReplies(m.Replies))
		mcpOpts = append(mcpOpts, inboxmcp.WithReplies(m.Replies))
	}
	// Schedules: each fire is a signal sent as POST …/signals sends it.
	m.Schedules = schedule.NewService(st, agents, cfg.AgentIDs(), m.base())
	m.Scheduler = schedule.NewScheduler(m.Schedules, cfg.Schedules, m.base())
	m.services = append(m.services, m.Scheduler)
	api := agentapi.New(agents, st, m.Broker, apiOpts...)
	api.Mount(e)
	inboxmcp.New(agents, mcpOpts...).Mount(e)
	parsers, err := m.mountConnectors(e)
	if err != nil {
		return err
	}

	deps, err := adminDeps(cfg, st, policy, parsers, m.Log, m.Now,
		adminLive{Inbox: m.Metrics.WrapIngester(m.Inbox), Pollers: admin.AsPollers(m.Pollers), Notify: kick.Notify})
	if err != nil {
		return err
	}
	if m.Replies != nil {
		deps.Replies = m.Replies
	}
	deps.Watches, deps.WatchEnder = st, m.Watches
	deps.Schedules = m.Schedules
	deps.Silences, deps.Holder = m.Silences, m.Silences
	adm, err := admin.New(cfg.Admin, deps)
	if err != nil {
		return err
	}
	adm.Mount(e)
	con, err := console.New(cfg.Console, console.Deps{Admin: adm, Stream: api, Sessions: st, Tokens: cfg.Admin.Tokens,
		Agents: cfg.AgentIDs(), Connectors: deps.Connectors, Log: m.Log, Now: m.Now})
	if err != nil {
		return err
	}
	con.Mount(e)
	// A person opening the gateway's address in a browser gets the console.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, console.Prefix) })
	m.services = append(m.services, retention.New(cfg.Retention, st, m.base(), retention.WithObserver(m.Metrics.RetentionDeleted)))

	addr, err := m.Server.Listen()
	if err != nil {
		return err
	}
	m.addr = addr
	for _, svc := range m.services {
		if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start %s: %w", svc.Name(), err)
		}
		m.running = append(m.running, svc)
	}
	m.Server.Start()
	m.Log.Info("serving", "component", "gateway", "addr", addr.String(), "storage", cfg.Storage.Driver,
		"agents", len(cfg.Agents), "routes", len(cfg.Routes))
	return nil
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
		connectors.WithWatches(st), connectors.WithClock(m.Now))
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
	opts := []reply.Option{reply.WithMaxAge(cfg.Replies.MaxAge), reply.WithSecrets(cfg.Secrets()), reply.WithWatches(m.Watches)}
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
		poller, err := email.NewPoller(ec, pipeline, m.Store, m.base(), email.WithLock(mailboxLock(m.Config, m.Log)), email.WithOwn(m.Store), email.WithHooks(email.Hooks{
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
	// Stop background services (pollers, socket clients, dispatcher) after the HTTP
	// server so in-flight requests can still finish against them.
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.Server.ShutdownGrace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
		m.Server = nil
	}
	for i := len(m.running) - 1; i >= 0; i-- {
		svc := m.running[i]
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		if err := svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", svc.Name(), err))
		}
		cancel()
	}
	m.running, m.services = nil, nil
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

// autoReplies hands Mastra followers the outbox, which is built after them (it needs the
// approvals service, which needs the dispatcher, which needs the followers' targets).
type autoReplies struct{ s *reply.Service }

func (a *autoReplies) Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error) {
	if a.s == nil {
		return reply.Reply{}, fmt.Errorf("%w: no connector of this gateway sends replies", reply.ErrUnknownPlace)
	}
	return a.s.Queue(ctx, k, req)
}
