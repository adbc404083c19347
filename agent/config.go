package agent

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/signalgate/signalgate/bytesize"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
)

// Target kinds: how a thread's agent is reached.
const (
	TargetStream  = "stream"  // the agent subscribes over SSE
	TargetMastra  = "mastra"  // a Mastra server's HTTP API
	TargetWebhook = "webhook" // a signed HTTP POST
)

// Config is one entry of the `agents:` list of config.yaml.
type Config struct {
	ID     string        `yaml:"id"`
	Token  secret.Secret `yaml:"token"` // bearer token for the agent API
	Target TargetConfig  `yaml:"target"`
	// RunLease is how long a run stays open without a heartbeat (default 5m).
	RunLease time.Duration `yaml:"run_lease"`
	// MaxContents bounds a signal's contents in bytes (default 256 KiB).
	MaxContents bytesize.Size `yaml:"max_contents"`
	// MaxStreams caps the agent token's open thread streams (default 1024), and
	// MaxStreamsPerThread those of one thread (default 8): each holds a connection, a
	// goroutine and buffers. Beyond either, a new stream is answered 429.
	MaxStreams          int `yaml:"max_streams"`
	MaxStreamsPerThread int `yaml:"max_streams_per_thread"`
	// WakeBudget caps the wakes of each thread (nil: no budget). Beyond it a record that
	// would wake an idle thread is held for the thread's next summary.
	WakeBudget *WakeBudget `yaml:"wake_budget"`
	// MaxConcurrentWakes caps the runs the gateway's wakes hold open at once for this
	// agent (0: no cap); further wakes wait their turn.
	MaxConcurrentWakes int `yaml:"max_concurrent_wakes"`
	// Replies is how the agent's replies go out.
	Replies RepliesConfig `yaml:"replies"`
	// WatchConnectors are connectors ("source/name") the agent may watch beyond those its
	// routes feed it from.
	WatchConnectors []string `yaml:"watch_connectors"`
}

// RepliesConfig is agents[].replies.
type RepliesConfig struct {
	// Approval "required" holds every reply for an approver (approvals.slack_connector);
	// "" or "none" sends at once (a reply may still ask with approval: true).
	Approval string `yaml:"approval"`
}

// ApprovalRequired reports agents[].replies.approval: required.
func (c RepliesConfig) ApprovalRequired() bool { return c.Approval == "required" }

// TargetConfig says how signals reach the agent.
type TargetConfig struct {
	Kind    string        `yaml:"kind"`
	URL     string        `yaml:"url"`      // mastra: server base URL; webhook: POST URL
	AgentID string        `yaml:"agent_id"` // mastra: the agent's id on that server
	Secret  secret.Secret `yaml:"secret"`   // webhook: Standard Webhooks secret (whsec_…)
	// Secrets replaces Secret while a rotation overlaps: [new, old]; every delivery
	// carries a signature by each, so a receiver holding either verifies it.
	Secrets []secret.Secret          `yaml:"secrets"`
	Headers map[string]secret.Secret `yaml:"headers"` // extra request headers (e.g. Authorization for Mastra)
	Timeout time.Duration            `yaml:"timeout"` // per request (default 10s)
	// Concurrency bounds in-flight requests to this target (default 4).
	Concurrency int `yaml:"concurrency"`
	// MaxAttempts optionally caps attempts per record before it is failed (dead letter);
	// 0 (the default) leaves give-up to MaxAge. Probes of a down target do not count.
	MaxAttempts int `yaml:"max_attempts"`
	// MaxAge is how long after its first attempt a record keeps being retried before it
	// is failed (default 24h).
	MaxAge time.Duration `yaml:"max_age"`
	// FailureThreshold consecutive failed attempts mark the target down (default 5).
	FailureThreshold int `yaml:"failure_threshold"`
	// ProbeInterval paces the probes of a down target (default 30s; a Retry-After wins).
	ProbeInterval time.Duration `yaml:"probe_interval"`
	// MaxFollowed caps the Mastra threads whose streams are followed at once (default
	// 1024); the least recently active is let go first.
	MaxFollowed int `yaml:"max_followed"`
	// StreamOptions (mastra) go as ifIdle.streamOptions with every wake whose stream
	// options neither the notification nor a policy rule gives (e.g. requestContext
	// selecting the model).
	StreamOptions map[string]any `yaml:"stream_options"`
	// Reply (mastra): ReplyAuto queues the final assistant text of each run the gateway
	// woke as a reply to the thread's most recent origin; "" or "none" leaves answering
	// to the agent.
	Reply string `yaml:"reply"`
}

// ReplyAuto is target.reply: auto.
const ReplyAuto = "auto"

// Defaults.
const (
	DefaultRunLease         = 5 * time.Minute
	DefaultTimeout          = 10 * time.Second
	DefaultConcurrency      = 4
	DefaultMaxAge           = 24 * time.Hour
	DefaultFailureThreshold = 5
	DefaultProbeInterval    = 30 * time.Second
	// DefaultMaxStreams and DefaultMaxStreamsPerThread bound an agent's open streams.
	DefaultMaxStreams          = 1024
	DefaultMaxStreamsPerThread = 8
	DefaultMaxFollowed         = 1024
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
	if c.Target.MaxFollowed == 0 {
		c.Target.MaxFollowed = DefaultMaxFollowed
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.MaxStreamsPerThread == 0 {
		c.MaxStreamsPerThread = DefaultMaxStreamsPerThread
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
	if c.Target.MaxAge == 0 {
		c.Target.MaxAge = DefaultMaxAge
	}
	if c.Target.FailureThreshold == 0 {
		c.Target.FailureThreshold = DefaultFailureThreshold
	}
	if c.Target.ProbeInterval == 0 {
		c.Target.ProbeInterval = DefaultProbeInterval
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
	if a := c.Replies.Approval; a != "" && a != "none" && a != "required" {
		errs = append(errs, fmt.Errorf("replies.approval: %q is not one of required, none", a))
	}
	if c.Target.MaxFollowed < 0 {
		errs = append(errs, errors.New("target.max_followed: must not be negative"))
	}
	if c.MaxStreams < 0 || c.MaxStreamsPerThread < 0 {
		errs = append(errs, errors.New("max_streams, max_streams_per_thread: must not be negative"))
	}
	if c.MaxContents < 0 {
		errs = append(errs, errors.New("max_contents: must not be negative"))
	}
	if c.WakeBudget != nil {
		errs = append(errs, c.WakeBudget.validate("wake_budget")...)
	}
	if c.MaxConcurrentWakes < 0 || c.MaxConcurrentWakes > MaxConcurrentWakesLimit {
		errs = append(errs, fmt.Errorf("max_concurrent_wakes: must be between 0 (no cap) and %d", MaxConcurrentWakesLimit))
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
		if t.Kind == TargetWebhook {
			keys, problems := secret.Rotated("target.secret", t.Secret, t.Secrets, nil)
			errs = append(errs, problems...)
			if len(keys) == 0 && len(problems) == 0 {
				errs = append(errs, errors.New("target.secret: required for kind webhook (deliveries are always signed)"))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("target.kind: unknown %q (want stream, mastra or webhook)", t.Kind))
	}
	if t.StreamOptions != nil && t.Kind != TargetMastra {
		errs = append(errs, fmt.Errorf("target.stream_options: only a mastra target takes them (kind is %s)", cmp.Or(t.Kind, TargetStream)))
	} else if err := inbox.CheckStreamOptions(t.StreamOptions); err != nil {
		errs = append(errs, fmt.Errorf("target.stream_options: %w", err))
	}
	switch {
	case t.Reply == "" || t.Reply == "none":
	case t.Reply != ReplyAuto:
		errs = append(errs, fmt.Errorf("target.reply: %q is not one of auto, none", t.Reply))
	case t.Kind != TargetMastra:
		errs = append(errs, fmt.Errorf("target.reply: only a mastra target answers by itself (kind is %s); other agents post replies through the agent API", cmp.Or(t.Kind, TargetStream)))
	}
	if t.Timeout < 0 || t.Concurrency < 0 || t.MaxAttempts < 0 {
		errs = append(errs, errors.New("target: timeout, concurrency and max_attempts must not be negative"))
	}
	if t.MaxAge < 0 {
		errs = append(errs, errors.New("target.max_age: must not be negative"))
	}
	if t.FailureThreshold < 0 {
		errs = append(errs, errors.New("target.failure_threshold: must not be negative"))
	}
	if t.ProbeInterval < 0 || (t.ProbeInterval > 0 && t.ProbeInterval < time.Second) {
		errs = append(errs, errors.New("target.probe_interval: must be at least 1s"))
	}
	return errors.Join(errs...)
}
