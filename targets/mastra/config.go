package mastra

import (
	"errors"
	"fmt"
	"time"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Kind is the target kind (agents[].target.kind: mastra); the origin of the runs a
// follower learns of from Mastra's thread stream.
const Kind = "mastra"

// PresenceSource: a Mastra server reports its runs (the thread stream), so the gateway
// does not infer them and the agent needs no token of its own.
const PresenceSource = agent.PresenceRuntime

// Recovery: Mastra holds every signal it accepted (in the thread's memory or its own
// queue, which an abort keeps unless told to clear), so a crashed run's accepted signals
// are not sent again.
const Recovery = delivery.RuntimeKeepsAccepted

// DefaultMaxFollowed caps the threads a follower follows at once.
const DefaultMaxFollowed = 1024

// Config is a mastra target's own keys under agents[].target.
type Config struct {
	URL     string                   `yaml:"url"`      // the Mastra server's base URL
	AgentID string                   `yaml:"agent_id"` // the agent's id on that server
	Headers map[string]secret.Secret `yaml:"headers"`  // extra request headers (e.g. Authorization)
	// MaxFollowed caps the Mastra threads whose streams are followed at once (default
	// 1024); the least recently active is let go first.
	MaxFollowed int `yaml:"max_followed"`
	// StreamOptions go as ifIdle.streamOptions with every wake whose stream options
	// neither the notification nor a policy rule gives (e.g. requestContext selecting
	// the model).
	StreamOptions map[string]any `yaml:"stream_options"`
}

// WithDefaults fills unset keys.
func (c Config) WithDefaults() Config {
	if c.MaxFollowed == 0 {
		c.MaxFollowed = DefaultMaxFollowed
	}
	return c
}

// Validate reports problems by key, relative to agents[].target.
func (c Config) Validate() error {
	var errs []error
	errs = append(errs, httptarget.CheckURL("url", c.URL, Kind))
	if c.AgentID == "" {
		errs = append(errs, errors.New("agent_id: required for kind mastra"))
	}
	if c.MaxFollowed < 0 {
		errs = append(errs, errors.New("max_followed: must not be negative"))
	}
	if err := inbox.CheckStreamOptions(c.StreamOptions); err != nil {
		errs = append(errs, fmt.Errorf("stream_options: %w", err))
	}
	return errors.Join(errs...)
}

// WakeStreamOptions are stream_options, the default of every wake
// (delivery.StreamOptionsDefault).
func (c Config) WakeStreamOptions() map[string]any { return c.StreamOptions }

// Describe is `check`'s summary of the target: where it points, without its secrets.
func (c Config) Describe() string {
	return httptarget.SafeURL(c.URL) + " agent " + c.AgentID
}

// server is how one mastra agent is reached: its own keys and the common ones used here.
type server struct {
	Config
	Timeout time.Duration
	Reply   string
}

// serverOf is agent cfg's mastra target, with defaults.
func serverOf(cfg agent.Config) (server, error) {
	cfg = cfg.WithDefaults()
	c, ok := cfg.Target.Settings.(Config)
	if cfg.Target.Kind != Kind || !ok {
		return server{}, fmt.Errorf("agent %q: target kind is %q, not mastra", cfg.ID, cfg.Target.Kind)
	}
	return server{Config: c.WithDefaults(), Timeout: cfg.Target.Timeout, Reply: cfg.Target.Reply}, nil
}

// Agent is a mastra agent's config for code that builds one (tests, tools): kind,
// presence and settings as the gateway's target table decodes them.
func Agent(id string, c Config) agent.Config {
	return agent.Config{ID: id, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}
