package agent

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/signalgate/signalgate/server"
)

// Target kinds: how a thread's agent is reached.
const (
	TargetStream  = "stream"  // the agent subscribes over SSE
	TargetMastra  = "mastra"  // a Mastra server's HTTP API
	TargetWebhook = "webhook" // a signed HTTP POST
)

// Config is one entry of the `agents:` list of config.yaml.
type Config struct {
	ID     string       `yaml:"id"`
	Token  string       `yaml:"token"` // bearer token for the agent API
	Target TargetConfig `yaml:"target"`
	// RunLease is how long a run stays open without a heartbeat (default 5m).
	RunLease time.Duration `yaml:"run_lease"`
	// MaxContents bounds a signal's contents in bytes (default 256 KiB).
	MaxContents server.ByteSize `yaml:"max_contents"`
}

// TargetConfig says how signals reach the agent.
type TargetConfig struct {
	Kind    string            `yaml:"kind"`
	URL     string            `yaml:"url"`      // mastra: server base URL; webhook: POST URL
	AgentID string            `yaml:"agent_id"` // mastra: the agent's id on that server
	Secret  string            `yaml:"secret"`   // webhook: Standard Webhooks secret (whsec_…)
	Headers map[string]string `yaml:"headers"`  // extra request headers (e.g. Authorization for Mastra)
	Timeout time.Duration     `yaml:"timeout"`  // per request (default 10s)
	// Concurrency bounds in-flight requests to this target (default 4).
	Concurrency int `yaml:"concurrency"`
	// MaxAttempts before a record is failed (dead letter); default 8.
	MaxAttempts int `yaml:"max_attempts"`
}

// Defaults.
const (
	DefaultRunLease    = 5 * time.Minute
	DefaultTimeout     = 10 * time.Second
	DefaultConcurrency = 4
	DefaultMaxAttempts = 8
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.RunLease == 0 {
		c.RunLease = DefaultRunLease
	}
	if c.MaxContents == 0 {
		c.MaxContents = DefaultMaxContents
	}
	if c.Target.Kind == "" {
		c.Target.Kind = TargetStream
	}
	if c.Target.Timeout == 0 {
		c.Target.Timeout = DefaultTimeout
	}
	if c.Target.Concurrency == 0 {
		c.Target.Concurrency = DefaultConcurrency
	}
	if c.Target.MaxAttempts == 0 {
		c.Target.MaxAttempts = DefaultMaxAttempts
	}
	return c
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	switch {
	case c.ID == "":
		errs = append(errs, errors.New("id: required"))
	case !idPattern.MatchString(c.ID):
		errs = append(errs, fmt.Errorf("id: %q may hold only letters, digits, '_', '.' and '-'", c.ID))
	}
	switch {
	case c.Token == "" && c.Target.Kind != TargetMastra:
		// Stream and webhook agents open runs through the agent API; a Mastra agent's
		// presence comes from its server, so it needs a token only to use the API.
		errs = append(errs, errors.New("token: required (the agent API's bearer token)"))
	case c.Token != "" && len(c.Token) < 12:
		errs = append(errs, errors.New("token: must be at least 12 characters"))
	}
	if c.RunLease < 0 {
		errs = append(errs, errors.New("run_lease: must not be negative"))
	}
	if c.MaxContents < 0 {
		errs = append(errs, errors.New("max_contents: must not be negative"))
	}
	t := c.Target
	switch t.Kind {
	case "", TargetStream:
	case TargetMastra, TargetWebhook:
		if t.URL == "" {
			errs = append(errs, fmt.Errorf("target.url: required for kind %s", t.Kind))
		} else if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("target.url: want an http(s) URL"))
		}
		if t.Kind == TargetMastra && t.AgentID == "" {
			errs = append(errs, errors.New("target.agent_id: required for kind mastra"))
		}
		if t.Kind == TargetWebhook && t.Secret == "" {
			errs = append(errs, errors.New("target.secret: required for kind webhook (deliveries are always signed)"))
		}
	default:
		errs = append(errs, fmt.Errorf("target.kind: unknown %q (want stream, mastra or webhook)", t.Kind))
	}
	if t.Timeout < 0 || t.Concurrency < 0 || t.MaxAttempts < 0 {
		errs = append(errs, errors.New("target: timeout, concurrency and max_attempts must not be negative"))
	}
	return errors.Join(errs...)
}
