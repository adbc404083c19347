package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/a2a"
	"github.com/signalgate/signalgate/targets/claudeagents"
	"github.com/signalgate/signalgate/targets/httptarget"
	"github.com/signalgate/signalgate/targets/langgraph"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/openaiagents"
	"github.com/signalgate/signalgate/targets/session"
	"github.com/signalgate/signalgate/targets/webhook"
)

// builtinTargets is the table of target kinds: how agents are reached, one row per
// kind. The kind's keys under agents[].target (decoded, defaulted, validated, walked
// for unknown keys and secrets), check's line and --connect probe, the route and what
// runs beside it, presence, in-flight recovery, the metrics' target label and the
// OpenAPI target enum all come from these rows, in this order.
//
// To add a kind: write its package (targets/<kind>) with a config type (credentials
// typed secret.Secret, an optional WithDefaults, a Validate naming its keys) and a
// target (Deliver), then add its row here.
func builtinTargets() []targetKind {
	return []targetKind{
		TargetKind[struct{}]{
			Kind:     agent.TargetStream,
			Presence: agent.PresenceRuns,
			Recovery: delivery.RedeliverInFlight,
			Build: func(a agent.Config, _ struct{}, b targetBuild) (delivery.Route, []background, error) {
				// The log append is the delivery: no request to bound.
				return delivery.RouteOf(a, b.stream), nil, nil
			},
		},
		TargetKind[mastra.Config]{
			Kind:      mastra.Kind,
			Presence:  mastra.PresenceSource,
			Recovery:  mastra.Recovery,
			AutoReply: true,
			Describe:  mastra.Config.Describe,
			Build: func(a agent.Config, _ mastra.Config, b targetBuild) (delivery.Route, []background, error) {
				var opts []mastra.FollowerOption
				if b.approvals != nil {
					opts = append(opts, mastra.WithApprovals(b.approvals))
				}
				if b.replies != nil {
					opts = append(opts, mastra.WithReplies(b.replies))
				}
				f := mastra.NewFollower(a, b.runs, b.notify, service.Base{Logger: b.log}, opts...)
				t, err := mastra.New(a, mastra.WithFollower(f), mastra.WithTracerProvider(b.traces))
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), []background{f}, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c mastra.Config, key string, hc *http.Client) (string, error) {
				return mastra.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
			Runtime: func(agents []agent.Config, hc *http.Client) runtimeClients {
				c := mastra.NewClient(agents, hc)
				return runtimeClients{Aborter: c, Resumer: &mastra.ToolApprovals{Client: c}}
			},
		},
		TargetKind[webhook.Config]{
			Kind:     webhook.Kind,
			Presence: webhook.PresenceSource,
			Recovery: webhook.Recovery,
			Describe: webhook.Config.Describe,
			Build: func(a agent.Config, _ webhook.Config, b targetBuild) (delivery.Route, []background, error) {
				t, err := webhook.New(a, webhook.WithTracerProvider(b.traces))
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), nil, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c webhook.Config, key string, hc *http.Client) (string, error) {
				return webhook.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
		},
		TargetKind[langgraph.Config]{
			Kind:      langgraph.Kind,
			Presence:  langgraph.PresenceSource,
			Recovery:  langgraph.Recovery,
			AutoReply: true,
			Describe:  langgraph.Config.Describe,
			Build: func(a agent.Config, _ langgraph.Config, b targetBuild) (delivery.Route, []background, error) {
				var opts []langgraph.FollowerOption
				if b.approvals != nil {
					opts = append(opts, langgraph.WithQuestions(b.approvals))
				}
				if b.replies != nil {
					opts = append(opts, langgraph.WithReplies(b.replies))
				}
				f := langgraph.NewFollower(a, b.runs, b.notify, service.Base{Logger: b.log}, opts...)
				t, err := langgraph.New(f, langgraph.WithTracerProvider(b.traces))
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), []background{f}, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c langgraph.Config, key string, hc *http.Client) (string, error) {
				return langgraph.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
			Runtime: func(agents []agent.Config, hc *http.Client) runtimeClients {
				c := langgraph.NewClient(agents, hc)
				return runtimeClients{Aborter: c, Resumer: c}
			},
		},
		TargetKind[a2a.Config]{
			Kind:      a2a.Kind,
			Presence:  a2a.PresenceSource,
			Recovery:  a2a.Recovery,
			AutoReply: true,
			Describe:  a2a.Config.Describe,
			Build: func(a agent.Config, _ a2a.Config, b targetBuild) (delivery.Route, []background, error) {
				if b.state == nil {
					return delivery.Route{}, nil, fmt.Errorf("agent %q: an a2a target keeps its tasks in the store, and none was given", a.ID)
				}
				var opts []a2a.TasksOption
				if b.approvals != nil {
					opts = append(opts, a2a.WithQuestions(b.approvals))
				}
				if b.replies != nil {
					opts = append(opts, a2a.WithReplies(b.replies))
				}
				tasks := a2a.NewTasks(a, b.runs, b.notify, b.state, httptarget.Traced(nil, b.traces), service.Base{Logger: b.log}, opts...)
				t, err := a2a.NewTarget(tasks)
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), []background{tasks}, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c a2a.Config, key string, hc *http.Client) (string, error) {
				return a2a.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
			Runtime: func(agents []agent.Config, hc *http.Client) runtimeClients {
				return runtimeClients{Resumer: a2a.NewAnswers(agents, hc)}
			},
		},
		// The hosted session kinds' targets answer the runtime calls themselves (they
		// know each thread's session): no Runtime row.
		TargetKind[openaiagents.Config]{
			Kind:      openaiagents.Kind,
			Presence:  openaiagents.PresenceSource,
			Recovery:  openaiagents.Recovery,
			AutoReply: true,
			Describe:  openaiagents.Config.Describe,
			Build: func(a agent.Config, c openaiagents.Config, b targetBuild) (delivery.Route, []background, error) {
				t, err := openaiagents.New(a, c, httptarget.Traced(nil, b.traces), b.sessionDeps(), service.Base{Logger: b.log})
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), []background{t}, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c openaiagents.Config, key string, hc *http.Client) (string, error) {
				return openaiagents.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
		},
		TargetKind[claudeagents.Config]{
			Kind:      claudeagents.Kind,
			Presence:  claudeagents.PresenceSource,
			Recovery:  claudeagents.Recovery,
			AutoReply: true,
			Describe:  claudeagents.Config.Describe,
			Build: func(a agent.Config, c claudeagents.Config, b targetBuild) (delivery.Route, []background, error) {
				t, err := claudeagents.New(a, c, httptarget.Traced(nil, b.traces), b.sessionDeps(), service.Base{Logger: b.log})
				if err != nil {
					return delivery.Route{}, nil, err
				}
				return b.route(a, t), []background{t}, nil
			},
			Probe: func(ctx context.Context, a agent.Config, c claudeagents.Config, key string, hc *http.Client) (string, error) {
				return claudeagents.Probe(ctx, hc, c, a.Target.Timeout, key)
			},
		},
	}
}

// targetKind is what the gateway asks of a row of the target table; TargetKind
// implements it for each target package's config type.
type targetKind interface {
	kind() string
	presence() agent.Presence
	recovery() delivery.RecoveryRule
	autoReply() bool
	// settings is the kind's config type.
	settings() reflect.Type
	// decode reads the kind's keys from the target's mapping (n may be nil), with the
	// kind's defaults applied.
	decode(n *yaml.Node) (any, error)
	describe(a agent.Config) string
	build(a agent.Config, b targetBuild) (delivery.Route, []background, error)
	probe(a agent.Config, key string, hc *http.Client) func(ctx context.Context) (string, error)
	runtime(agents []agent.Config, hc *http.Client) (runtimeClients, bool)
}

// TargetKind is one target kind: its package's config type C and what the gateway does
// with it. Defaults come from C's WithDefaults method when it has one, validation from
// its Validate (keys relative to agents[].target), credential strength from its
// CheckCredentials (checked with the other credentials, after every section).
type TargetKind[C any] struct {
	// Kind is agents[].target.kind, the attempt log's target and the metrics' label.
	Kind string
	// Presence is where the kind's presence comes from: the gateway's inference from
	// runs (the agent needs a token) or the runtime's own reports.
	Presence agent.Presence
	// Recovery is what a crashed run's in-flight signals become.
	Recovery delivery.RecoveryRule
	// AutoReply: the kind's runtime answers by itself, so target.reply: auto may queue
	// the final answer of each run the gateway woke (the build's replies).
	AutoReply bool
	// Describe, if set, is check's summary of one agent's target after its kind. It
	// must not show secrets.
	Describe func(C) string
	// Build makes one agent's route (its target, bounds and defaults: b.route) and what
	// runs beside it: presence followers, pollers. They start before the dispatcher and
	// stop after it. A returned part with a Mount(*echo.Echo) method is mounted on the
	// gateway's router: the endpoint a runtime posts its own webhooks to (presence,
	// questions), documented in admin's OpenAPI paths.
	Build func(a agent.Config, c C, b targetBuild) (delivery.Route, []background, error)
	// Probe, if set, is check --connect's try of one agent's target; key is its config
	// path (agents[i].target).
	Probe func(ctx context.Context, a agent.Config, c C, key string, hc *http.Client) (string, error)
	// Runtime, if set, builds the clients the gateway calls the kind's runtime with
	// beyond deliveries, over all the kind's agents: aborting a thread's run (the agent
	// API's abort of a PresenceRuntime agent), answering a suspended tool call (approvals).
	Runtime func(agents []agent.Config, hc *http.Client) runtimeClients
}

func (k TargetKind[C]) kind() string                    { return k.Kind }
func (k TargetKind[C]) presence() agent.Presence        { return k.Presence }
func (k TargetKind[C]) recovery() delivery.RecoveryRule { return k.Recovery }
func (k TargetKind[C]) autoReply() bool                 { return k.AutoReply }
func (k TargetKind[C]) settings() reflect.Type          { return reflect.TypeFor[C]() }

func (k TargetKind[C]) decode(n *yaml.Node) (any, error) {
	var c C
	var err error
	if n != nil {
		// The common keys in the same mapping are agent.TargetConfig's: not C's to refuse.
		err = n.Decode(&c)
	}
	return k.withDefaults(c), err
}

func (k TargetKind[C]) withDefaults(c C) C {
	if d, ok := any(c).(interface{ WithDefaults() C }); ok {
		return d.WithDefaults()
	}
	return c
}

// of is a's settings as C: those decoded, or C's defaults for a config built in code
// without any.
func (k TargetKind[C]) of(a agent.Config) (C, error) {
	switch c := a.Target.Settings.(type) {
	case C:
		return c, nil
	case nil:
		var zero C
		return k.withDefaults(zero), nil
	default:
		var zero C
		return zero, fmt.Errorf("agent %q: target settings are %T, not kind %s's", a.ID, c, k.Kind)
	}
}

func (k TargetKind[C]) describe(a agent.Config) string {
	c, err := k.of(a)
	if k.Describe == nil || err != nil {
		return k.Kind
	}
	return k.Kind + " " + k.Describe(c)
}

func (k TargetKind[C]) build(a agent.Config, b targetBuild) (delivery.Route, []background, error) {
	c, err := k.of(a)
	if err != nil {
		return delivery.Route{}, nil, err
	}
	return k.Build(a, c, b)
}

func (k TargetKind[C]) probe(a agent.Config, key string, hc *http.Client) func(ctx context.Context) (string, error) {
	if k.Probe == nil {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		c, err := k.of(a)
		if err != nil {
			return "", err
		}
		return k.Probe(ctx, a, c, key, hc)
	}
}

func (k TargetKind[C]) runtime(agents []agent.Config, hc *http.Client) (runtimeClients, bool) {
	if k.Runtime == nil || len(agents) == 0 {
		return runtimeClients{}, false
	}
	return k.Runtime(agents, hc), true
}

// targetBuild is what a row builds its agents' routes with.
type targetBuild struct {
	runs *agent.Runs
	// notify is told of threads that turned idle (the dispatcher's wake-up).
	notify func([]inbox.ThreadKey)
	// stream is the stream target every stream agent shares.
	stream delivery.Target
	// approvals relays the tool approvals a runtime reports to the approvals service;
	// nil when approvals are off.
	approvals *approval.Relay
	// replies queues a runtime's answers (target.reply: auto) into the reply outbox.
	replies replyQueue
	// state keeps small durable values of a kind's runtime, shared by the replicas (the
	// store's connector state: an A2A context's task).
	state targetState
	// sessions keeps the sessions of the hosted session kinds' threads.
	sessions session.Store
	log      *slog.Logger
	traces   trace.TracerProvider
}

// targetState is the store's connector state table as a runtime's parts keep theirs.
type targetState interface {
	ConnectorState(ctx context.Context, connector, key string) (value string, ok bool, err error)
	SetConnectorState(ctx context.Context, connector, key, value string) error
}

// sessionDeps are what a hosted session target works with.
func (b targetBuild) sessionDeps() session.Deps {
	d := session.Deps{Sessions: b.sessions, Runs: b.runs, Notify: b.notify}
	if b.approvals != nil {
		d.Approvals = b.approvals
	}
	if b.replies != nil {
		d.Replies = b.replies
	}
	return d
}

// replyQueue queues replies into the outbox (reply.Service, once built).
type replyQueue interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req reply.Request) (reply.Reply, error)
}

// route is a's route through t: its retry, give-up and health settings, and
// target.concurrency bounding the requests to t.
func (b targetBuild) route(a agent.Config, t delivery.Target) delivery.Route {
	a = a.WithDefaults()
	r := delivery.RouteOf(a, t)
	r.Concurrency = a.Target.Concurrency
	return r
}

// runtimeClients are what a kind's Runtime gives: any may be nil.
type runtimeClients struct {
	Aborter agent.ThreadAborter
	Resumer approval.Resumer
}

// mounter is a part that serves HTTP on the gateway's router.
type mounter interface{ Mount(*echo.Echo) }

// builtTargets are the routes of every agent and what runs beside them.
type builtTargets struct {
	routes   map[string]delivery.Route
	services []background
	mounts   []mounter
	// runtimes read each agent's threads from its runtime, by agent (the console's
	// thread page): the parts beside a route that can tell (agent.RuntimeRuns).
	runtimes agentRuns
}

// agentRuns routes the console's reading of a thread to its agent's agent.RuntimeRuns.
type agentRuns map[string]agent.RuntimeRuns

// RuntimeRun reads k from its agent's runtime; ok is false for an agent whose runtime
// cannot say.
func (v agentRuns) RuntimeRun(ctx context.Context, k inbox.ThreadKey) (agent.RuntimeRun, bool, error) {
	if rr, ok := v[k.Agent]; ok {
		return rr.RuntimeRun(ctx, k)
	}
	return agent.RuntimeRun{}, false, nil
}
