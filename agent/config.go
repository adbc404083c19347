package agent

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/signalgate/signalgate/bytesize"
	"github.com/signalgate/signalgate/secret"
)

// TargetStream is the built-in target kind, and the default: the agent subscribes to
// its threads over SSE and the gateway's log append is the delivery. Every other kind
// is a row of the gateway's target table, named there.
const TargetStream = "stream"

// Presence is where a target kind's presence comes from: who says when a thread's run
// starts and ends.
type Presence int

const (
	// PresenceRuns: the gateway infers it from the runs the agent opens and finishes
	// through the agent API and the runs its wakes open. The agent needs a token.
	PresenceRuns Presence = iota
	// PresenceRuntime: the runtime reports its runs (over a stream the gateway follows,
	// or webhooks it posts), so the agent needs a token only to use the agent API. Such
	// a runtime also asks for tool approvals itself (the gateway relays them), and
	// aborting its run through the agent API aborts the runtime's run first.
	PresenceRuntime
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

// TargetConfig says how signals reach the agent: its kind, the delivery keys every
// kind shares, and the kind's own keys (Settings).
type TargetConfig struct {
	Kind    string        `yaml:"kind"`
	Timeout time.Duration `yaml:"timeout"` // per request (default 10s)
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
	// Reply: ReplyAuto queues the final answer of each run the gateway woke as a reply
	// to the thread's most recent origin, for a kind whose runtime answers by itself; ""
	// or "none" leaves answering to the agent.
	Reply string `yaml:"reply"`

	// Settings are the kind's own keys: its package's config type, decoded from the
	// same mapping by the gateway's target table (nil for a kind without keys). This
	// package never looks inside; a Validate method on them is called by Validate.
	Settings any `yaml:"-"`
	// Presence is the kind's presence source, set from its row with Settings.
	Presence Presence `yaml:"-"`
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
	case c.Token == "" && c.Target.Presence != PresenceRuntime:
		// Agents whose presence the gateway infers open runs through the agent API; a
		// runtime that reports its runs needs a token only to use the API.
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
	if t.Reply != "" && t.Reply != "none" && t.Reply != ReplyAuto {
		errs = append(errs, fmt.Errorf("target.reply: %q is not one of auto, none", t.Reply))
	}
	if v, ok := t.Settings.(interface{ Validate() error }); ok {
		for _, err := range unjoin(v.Validate()) {
			errs = append(errs, underKey("target.", err))
		}
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

// underKey puts a problem named by keys relative to a section ("url: …", "secret,
// secrets: …") under the section's key.
func underKey(prefix string, err error) error {
	keys, rest, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		return fmt.Errorf("%s%w", prefix, err)
	}
	list := strings.Split(keys, ", ")
	for i := range list {
		list[i] = prefix + list[i]
	}
	return errors.New(strings.Join(list, ", ") + ": " + rest)
}

// unjoin is err's list when it joins several (errors.Join), else err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}
