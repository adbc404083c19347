package langgraph

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Kind is the target kind (agents[].target.kind: langgraph); the origin of the runs a
// follower adopts from the server (a run the gateway did not start).
const Kind = "langgraph"

// PresenceSource: the LangGraph server says when a thread runs (its thread status, its
// runs and their webhooks), so the gateway does not infer it and the agent needs no
// token of its own.
const PresenceSource = agent.PresenceRuntime

// Recovery: a signal the server accepted is in the thread's state (its input stays
// there even when the run fails), so a crashed run's accepted signals are not sent
// again; only what the server never took is.
const Recovery = delivery.RuntimeKeepsAccepted

// Multitask strategies: what the server does with a run for a thread that is running
// one (LangGraph's multitask_strategy).
const (
	Enqueue   = "enqueue"   // the run waits for the one in flight
	Interrupt = "interrupt" // the run in flight is cancelled, its state kept
	Rollback  = "rollback"  // the run in flight is cancelled (the JS server keeps its input, as interrupt)
	Reject    = "reject"    // no run while one is in flight: the gateway holds the signal until the thread is idle
)

var strategies = []string{Enqueue, Interrupt, Rollback, Reject}

// Defaults.
const (
	DefaultPollInterval = 10 * time.Second
	// MinPollInterval bounds how often each busy thread is read.
	MinPollInterval = time.Second
	// MinCallbackToken is the shortest callback_token taken.
	MinCallbackToken = 16
)

// Config is a langgraph target's own keys under agents[].target.
type Config struct {
	URL         string                   `yaml:"url"`          // the Agent Server's base URL
	AssistantID string                   `yaml:"assistant_id"` // an assistant id, or a graph id
	Headers     map[string]secret.Secret `yaml:"headers"`      // extra request headers (e.g. x-api-key)
	// Input is the run's input: a JSON object whose string values are Go templates over
	// the signal (see Input). Default: {messages: [{role: user, content: "{{.XML}}", id: "{{.ID}}"}]}.
	Input map[string]any `yaml:"input"`
	// Busy is the multitask_strategy of a run for a thread the server is running, by the
	// signal's priority.
	Busy Busy `yaml:"busy"`
	// RunConfig and Context go as config and context with every run (the defaults of a
	// wake's stream options: {config, context}).
	RunConfig map[string]any `yaml:"config"`
	Context   map[string]any `yaml:"context"`
	// CallbackURL is the gateway's base URL as the LangGraph server reaches it: each run
	// gets {callback_url}/targets/langgraph/{agent}/webhook?… as its webhook, so its end
	// is known at once. Unset: runs end when polling sees them end.
	CallbackURL string `yaml:"callback_url"`
	// CallbackToken keys the webhook URLs' signatures (the server signs nothing, so the
	// URL carries the proof); replicas share it.
	CallbackToken secret.Secret `yaml:"callback_token"`
	// PollInterval is how often each thread with an open run is read from the server
	// (the fallback for a webhook that never came, and its lease renewal).
	PollInterval time.Duration `yaml:"poll_interval"`
}

// Busy is busy: the multitask strategy per priority; an unset priority takes Default.
type Busy = agent.Busy

// WithDefaults fills unset keys. With no busy key at all, urgent signals interrupt the
// run in flight and the others wait for it (enqueue).
func (c Config) WithDefaults() Config {
	if c.Busy == (Busy{}) {
		c.Busy.Urgent = Interrupt
	}
	if c.Busy.Default == "" {
		c.Busy.Default = Enqueue
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Input == nil {
		c.Input = DefaultInput()
	}
	return c
}

// DefaultInput is the input of a MessagesState graph: one user message holding the
// signal's XML, its id the signal's (a resent signal replaces its message).
func DefaultInput() map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": "{{.XML}}", "id": "{{.ID}}"}}}
}

// Validate reports problems by key, relative to agents[].target.
func (c Config) Validate() error {
	var errs []error
	errs = append(errs, httptarget.CheckURL("url", c.URL, Kind))
	if c.AssistantID == "" {
		errs = append(errs, errors.New("assistant_id: required for kind langgraph (an assistant id or a graph id)"))
	}
	errs = append(errs, c.Busy.Check("strategy", strategies...)...)
	if _, err := CompileInput(c.Input); err != nil {
		errs = append(errs, fmt.Errorf("input: %w", err))
	}
	for key, m := range map[string]map[string]any{"config": c.RunConfig, "context": c.Context} {
		if err := inbox.CheckStreamOptions(m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	switch {
	case c.CallbackURL == "" && c.CallbackToken != "":
		errs = append(errs, errors.New("callback_token: set only with callback_url"))
	case c.CallbackURL != "":
		if p, err := url.Parse(c.CallbackURL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" ||
			p.RawQuery != "" || p.Fragment != "" || p.User != nil {
			errs = append(errs, errors.New("callback_url: want the gateway's http(s) base URL, without query or credentials"))
		}
		if c.CallbackToken == "" {
			errs = append(errs, errors.New("callback_token: required with callback_url (the server signs no webhook: its URL carries the proof)"))
		}
	}
	if c.PollInterval < 0 || (c.PollInterval > 0 && c.PollInterval < MinPollInterval) {
		errs = append(errs, fmt.Errorf("poll_interval: at least %s", MinPollInterval))
	}
	return errors.Join(errs...)
}

// CheckCredentials reports a callback_token too short to key the webhook URLs with.
func (c Config) CheckCredentials() error {
	if c.CallbackToken != "" && len(c.CallbackToken) < MinCallbackToken {
		return fmt.Errorf("callback_token: must be at least %d characters", MinCallbackToken)
	}
	return nil
}

// WakeStreamOptions are {config, context}: the default stream options of every run
// (delivery.StreamOptionsDefault). A policy rule's stream_options with config or
// context replace them for the records it matches.
func (c Config) WakeStreamOptions() map[string]any {
	out := map[string]any{}
	if c.RunConfig != nil {
		out["config"] = c.RunConfig
	}
	if c.Context != nil {
		out["context"] = c.Context
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Describe is `check`'s summary of the target: where it points, without its secrets.
func (c Config) Describe() string {
	s := httptarget.SafeURL(c.URL) + " assistant " + c.AssistantID
	if c.CallbackURL != "" {
		s += ", webhooks to " + httptarget.SafeURL(c.CallbackURL)
	} else {
		s += ", polled every " + c.WithDefaults().PollInterval.String()
	}
	return s
}

// server is how one langgraph agent is reached: its own keys and the common ones used
// here.
type server struct {
	Config
	agent   string
	input   *Input
	Timeout time.Duration
	Reply   string
	// Lease is the agent's run lease: polling renews open runs well within it.
	Lease time.Duration
}

// serverOf is agent cfg's langgraph target, with defaults.
func serverOf(cfg agent.Config) (server, error) {
	cfg = cfg.WithDefaults()
	c, ok := cfg.Target.Settings.(Config)
	if cfg.Target.Kind != Kind || !ok {
		return server{}, fmt.Errorf("agent %q: target kind is %q, not langgraph", cfg.ID, cfg.Target.Kind)
	}
	c = c.WithDefaults()
	in, err := CompileInput(c.Input)
	if err != nil {
		return server{}, fmt.Errorf("agent %q: target.input: %w", cfg.ID, err)
	}
	if c.PollInterval >= cfg.RunLease {
		return server{}, fmt.Errorf("agent %q: target.poll_interval (%s) must be shorter than run_lease (%s): polling renews the open runs",
			cfg.ID, c.PollInterval, cfg.RunLease)
	}
	return server{Config: c, agent: cfg.ID, input: in, Timeout: cfg.Target.Timeout, Reply: cfg.Target.Reply, Lease: cfg.RunLease}, nil
}

// base is the server's base URL without a trailing slash.
func (s server) base() string { return strings.TrimRight(s.URL, "/") }

// Agent is a langgraph agent's config for code that builds one (tests, tools): kind,
// presence and settings as the gateway's target table decodes them.
func Agent(id string, c Config) agent.Config {
	return agent.Config{ID: id, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}
