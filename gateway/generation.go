package gateway

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

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
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/watch"
)

// Generation is what one config derives: the agents' targets and their routes, the
// connectors' parse steps and what they run (pollers, sockets), the agent API and MCP,
// approvals, watches, schedules, the reply outbox, retention, and the router that
// serves them. Open builds the first; a reload (reload.go) builds the next from the
// file, starts its services, swaps it in and retires the previous one. Its parts reach
// the long-lived ones through its Gateway.
type Generation struct {
	Config *Config
	Policy *inbox.Policy
	// Approvals is nil unless approvals.slack_connector is set.
	Approvals *approval.Service
	// Replies is the reply outbox; nil when no connector kind sends replies.
	Replies *reply.Service
	// Watches creates, lists and ends agents' watches.
	Watches *watch.Service
	// Schedules creates, changes and fires schedules; Scheduler fires them on time.
	Schedules *schedule.Service
	Scheduler *schedule.Scheduler
	// Pollers are the email connectors' mailbox pollers.
	Pollers []*email.Poller

	gw *Gateway
	// front runs beside the targets (presence followers): it starts before the
	// dispatcher and stops after it; services start after the dispatcher.
	front    []background
	services []background
	routes   map[string]delivery.Route
	api      *agentapi.API
	router   *echo.Echo
	// slotFreed is the generation's approvals' subscriber to freed wake slots.
	slotFreed func(agentID string)
	// refusalKeys name the connectors that take HTTP deliveries ("source/name"): those
	// whose refusals are kept.
	refusalKeys []string
}

// build wires what cfg derives as a generation of gw: its services (not started) and a
// router (not serving) with every route mounted. The first build also builds gw's
// dispatcher, over its routes.
func (gw *Gateway) build(cfg *Config, policy *inbox.Policy) (*Generation, error) {
	g := &Generation{Config: cfg, Policy: policy, gw: gw}
	st, kick := gw.Store, gw.kick
	// Runtimes that report tool approvals (Mastra followers) do so through a relay the
	// approvals service, built once the parts it sends through exist, subscribes to.
	var relay *approval.Relay
	if cfg.Approvals.Enabled() {
		relay = approval.NewRelay()
	}
	// target.reply: auto queues runs' answers into the outbox, built further down.
	auto := &autoReplies{}
	built, err := cfg.buildTargets(targetBuild{runs: gw.Runs, notify: kick.Notify, stream: agent.NewStreamTarget(),
		approvals: relay, replies: auto, state: store.NewConnectorState(st), sessions: store.NewSessions(st), log: gw.Log, traces: gw.Traces})
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	g.routes = built.routes
	if gw.Dispatcher == nil {
		gw.Dispatcher = gw.newDispatcher(cfg, policy, g.routes)
	}
	// What runs beside the targets (presence followers) starts before the dispatcher and
	// stops after it.
	g.front = append(g.front, built.services...)
	runtimes := cfg.runtimeClients(httptarget.Traced(nil, gw.Traces), g.routes)

	// Approvals: sends decisions through an emitter on presence and the dispatcher and
	// posts through the Slack connectors' bot clients; it subscribes to the followers'
	// relay and to freed wake slots. The agent operations and Slack clicks ask it.
	if cfg.Approvals.Enabled() {
		slots := &genSlots{}
		g.Approvals = approval.New(cfg.Approvals, approval.Deps{Store: store.NewApprovals(st), Places: store.NewApprovals(st),
			Slack:   slack.NewMessenger(entries[slack.Config](cfg.Connectors, slack.Source), cfg.Approvals.GroupCacheTTL, gw.Log, gw.Now),
			Resumer: runtimes, Emitter: agent.NewEmitter(store.NewFrames(st), gw.Runs, gw.Dispatcher, gw.Now),
			Relay: relay, Slots: slots, Base: gw.base(), Traces: gw.Traces})
		g.slotFreed = slots.h
		g.services = append(g.services, g.Approvals)
	}

	// Watches: what agents subscribe to at runtime; the sweep ends expired ones.
	g.Watches = watch.NewService(store.NewWatches(st), cfg.Watches, cfg.watchResources(), cfg.watchScope(build{repos: store.NewSeenRepos(st)}), gw.Metrics.WrapIngester(gw.Inbox), gw.base())
	g.services = append(g.services, watch.NewSweep(store.NewWatches(st), g.Watches, cfg.Watches, gw.base()))

	if err := g.openReplies(); err != nil {
		return nil, err
	}
	auto.s = g.Replies // set before any service starts

	e := gw.Server.NewRouter()
	e.GET("/metrics", echo.WrapHandler(gw.Metrics.Handler()))
	// Runtimes post their own webhooks (presence, questions) to what their kinds mount.
	for _, p := range built.mounts {
		p.Mount(e)
	}

	agentDeps := agent.Deps{
		Frames: store.NewFrames(st), Runs: gw.Runs, Inbox: gw.Metrics.WrapIngester(gw.Inbox),
		Records: store.NewRecords(st), States: store.NewStates(st), Deliverer: gw.Dispatcher, Notify: kick.Notify, Log: gw.Log,
		Aborter: runtimes,
	}
	if g.Approvals != nil {
		agentDeps.Approvals = g.Approvals
	}
	agents, err := agent.NewService(cfg.Agents, agentDeps, agent.WithServiceClock(gw.Now))
	if err != nil {
		return nil, err
	}
	apiOpts := []agentapi.Option{agentapi.WithLogger(gw.Log), agentapi.WithShutdown(gw.Server.Done()),
		agentapi.WithSubscriberGauge(gw.Metrics.SubscriberDelta), agentapi.WithStreamLimit(cfg.Server.WithDefaults().MaxStreams())}
	if prev := gw.Generation(); prev != nil {
		apiOpts = append(apiOpts, agentapi.WithStreamsOf(prev.api))
	}
	mcpOpts := []inboxmcp.Option{inboxmcp.WithLogger(gw.Log), inboxmcp.WithVersion(gw.Version),
		inboxmcp.WithCallTimeout(cfg.Server.WithDefaults().RequestTimeout), inboxmcp.WithWatches(g.Watches), inboxmcp.WithPlaces(cfg.places())}
	apiOpts = append(apiOpts, agentapi.WithWatches(g.Watches))
	if g.Replies != nil {
		apiOpts = append(apiOpts, agentapi.WithReplies(g.Replies))
		mcpOpts = append(mcpOpts, inboxmcp.WithReplies(g.Replies))
	}
	// Schedules: each fire is a signal sent as POST …/signals sends it.
	g.Schedules = schedule.NewService(store.NewSchedules(st), agents, cfg.AgentIDs(), gw.base())
	g.Scheduler = schedule.NewScheduler(g.Schedules, cfg.Schedules, gw.base())
	g.services = append(g.services, g.Scheduler)
	g.api = agentapi.New(agents, store.NewFrames(st), gw.Broker, apiOpts...)
	g.api.Mount(e)
	inboxmcp.New(agents, mcpOpts...).Mount(e)
	parsers, err := g.mountConnectors(e)
	if err != nil {
		return nil, err
	}

	deps, err := adminDeps(cfg, st, policy, parsers, gw.Log, gw.Now,
		adminLive{Inbox: gw.Metrics.WrapIngester(gw.Inbox), Pollers: admin.AsPollers(g.Pollers), Notify: kick.Notify})
	if err != nil {
		return nil, err
	}
	if g.Replies != nil {
		deps.Replies = g.Replies
	}
	deps.Watches, deps.WatchEnder = store.NewWatches(st), g.Watches
	deps.Schedules = g.Schedules
	deps.Silences, deps.Holder = gw.Silences, gw.Silences
	deps.Refusals = gw.Refusals
	adm, err := admin.New(cfg.Admin, deps)
	if err != nil {
		return nil, err
	}
	adm.Mount(e)
	e.POST(admin.ReloadPath, adm.Guard(admin.ScopeWrite, gw.serveReload))
	con, err := console.New(gw.consoleConfig(cfg), console.Deps{Admin: adm, Stream: g.api, Sessions: store.NewConsoleSessions(st), Tokens: cfg.Admin.Tokens,
		Agents: cfg.AgentIDs(), Connectors: deps.Connectors, Sources: deps.Sources, Places: deps.Places, Runtimes: built.runtimes,
		Log: gw.Log, Now: gw.Now})
	if err != nil {
		return nil, err
	}
	con.Mount(e)
	// A person opening the gateway's address in a browser gets the console.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, console.Prefix) })
	g.services = append(g.services, retention.New(cfg.Retention, store.NewRetention(st), gw.base(), retention.WithObserver(gw.Metrics.RetentionDeleted)))
	g.router = e
	return g, nil
}

// mountConnectors builds the ingest handlers and the pollers on one pipeline, and
// returns each source's parser for replay and explain.
func (g *Generation) mountConnectors(e *echo.Echo) (admin.Parsers, error) {
	cfg, gw, st := g.Config, g.gw, g.gw.Store
	router, err := cfg.Router()
	if err != nil {
		return nil, err
	}
	pipeline := connectors.NewPipeline(router, gw.Metrics.WrapIngester(gw.Inbox), gw.Log,
		connectors.WithBudgetExceeded(func() { gw.Metrics.ExpressionBudgetExceeded(metrics.PlaceRoute) }),
		connectors.WithWatches(store.NewWatches(st)), connectors.WithClock(gw.Now), connectors.WithSecretUsed(gw.Metrics.SecretUsed))
	parsers, err := cfg.buildParsers(build{pipeline: pipeline, ci: github.NewStoreCIState(store.NewConnectorState(st), github.Source), log: gw.Log, now: gw.Now,
		approvals: g.Approvals, own: store.NewReplies(st), seen: store.NewSeenRepos(st)})
	if err != nil {
		return nil, err
	}
	return parsers, g.mountKinds(e, parsers, pipeline)
}

// openReplies builds the reply outbox over the senders of the kinds that have one; it
// starts with the other services and stops before the store closes.
func (g *Generation) openReplies() error {
	cfg, gw := g.Config, g.gw
	senders, err := cfg.buildRepliers(build{log: gw.Log, now: gw.Now, own: store.NewReplies(gw.Store)})
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
	opts := []reply.Option{reply.WithMaxAge(cfg.Replies.MaxAge), reply.WithSecrets(cfg.Secrets()), reply.WithWatches(g.Watches),
		reply.WithTracerProvider(gw.Traces), reply.WithProvenance(cfg.replyProvenance()), reply.WithPlaces(cfg.places())}
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
	if g.Approvals != nil {
		opts = append(opts, reply.WithApprovals(g.Approvals, func(agent string) bool { return required[agent] }))
	}
	g.Replies = reply.New(store.NewReplies(gw.Store), senders, gw.base(), opts...)
	g.services = append(g.services, g.Replies)
	return nil
}

// emailPollers builds a poller per email connector on the pipeline.
func (g *Generation) emailPollers(cfgs []email.Config, _ admin.Parser, pipeline *connectors.Pipeline) ([]background, error) {
	gw := g.gw
	var out []background
	for _, ec := range cfgs {
		name := ec.Name
		poller, err := email.NewPoller(ec, pipeline, store.NewConnectorState(gw.Store), gw.base(), email.WithTracing(gw.Traces), email.WithLock(mailboxLock(g.Config, gw.Log)), email.WithOwn(store.NewReplies(gw.Store)), email.WithHooks(email.Hooks{
			Polled:       func(_ string, _ int, err error) { gw.Metrics.IMAPPoll(name, err) },
			Disconnected: func(string, error) { gw.Metrics.IMAPError(name) },
		}))
		if err != nil {
			return nil, err
		}
		g.Pollers = append(g.Pollers, poller)
		out = append(out, poller)
	}
	return out, nil
}
