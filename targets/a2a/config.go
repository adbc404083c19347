package a2a

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

// Kind is the target kind (agents[].target.kind: a2a), the origin of the questions its
// tasks ask and the attempt log's target.
const Kind = "a2a"

// PresenceSource: an A2A agent's tasks are the thread's presence (their states, from the
// answers, push notifications and polling), so the agent needs no token of its own.
const PresenceSource = agent.PresenceRuntime

// Recovery: a task the agent lost (it restarted with its tasks in memory, so it no
// longer knows the task) or that failed did not act on its signals, so they are
// delivered again into the thread's next run, marked recovered. A task that completed
// or that the agent rejected ends its run as finished: nothing is sent again.
const Recovery = delivery.RedeliverInFlight

// What a signal for a thread whose task is working does (target.busy, by priority).
const (
	// BusyWait holds it until the task ends; the thread's next task gets it. A2A agents
	// cannot say whether they take messages into a running task, so this is the default.
	BusyWait = "wait"
	// BusySend sends it into the working task (the message carries the task's id), for
	// agents that read messages while they work.
	BusySend = "send"
)

// Polling defaults: tasks/get is the fallback of push notifications (which the agent
// sends once, without retry), and the only source of state without them.
const (
	DefaultPollInterval       = 5 * time.Second
	DefaultPushedPollInterval = 30 * time.Second
	minPollInterval           = 100 * time.Millisecond
	maxPollInterval           = time.Minute
	defaultTimeout            = 10 * time.Second
	pushPath                  = "/push"
	pathPrefix                = "/targets/a2a/"
	cardPath                  = "/.well-known/agent-card.json"
	maxCallbackURL            = 2000
)

// Config is an a2a target's own keys under agents[].target.
type Config struct {
	// URL is the agent card's URL (ending in .json), or the agent's base URL, to which
	// /.well-known/agent-card.json is appended.
	URL string `yaml:"url"`
	// Headers go with every request to the agent (its card, its endpoint), e.g.
	// Authorization.
	Headers map[string]secret.Secret `yaml:"headers"`
	// Busy is what a signal for a thread whose task is working does, by its priority:
	// wait (the default) or send.
	Busy agent.Busy `yaml:"busy"`
	// CallbackURL is the gateway's base URL as the agent reaches it: set, each task the
	// gateway opens registers a push notification to {callback_url}/targets/a2a/{agent}/push
	// with a token of its own (when the card says the agent sends them).
	CallbackURL string `yaml:"callback_url"`
	// PollInterval paces tasks/get of each working task: 5s by default, 30s with a
	// callback_url (polling is then the fallback of a lost push notification).
	PollInterval time.Duration `yaml:"poll_interval"`
}

// WithDefaults fills unset keys.
func (c Config) WithDefaults() Config {
	if c.Busy.Default == "" {
		c.Busy.Default = BusyWait
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
		if c.CallbackURL != "" {
			c.PollInterval = DefaultPushedPollInterval
		}
	}
	return c
}

// Validate reports problems by key, relative to agents[].target.
func (c Config) Validate() error {
	var errs []error
	errs = append(errs, httptarget.CheckURL("url", c.URL, Kind))
	errs = append(errs, c.Busy.Check("choice", BusyWait, BusySend)...)
	if c.CallbackURL != "" {
		if err := checkCallback(c.CallbackURL); err != nil {
			errs = append(errs, fmt.Errorf("callback_url: %w", err))
		}
	}
	if c.PollInterval != 0 && (c.PollInterval < minPollInterval || c.PollInterval > maxPollInterval) {
		errs = append(errs, fmt.Errorf("poll_interval: %s is outside %s to %s", c.PollInterval, minPollInterval, maxPollInterval))
	}
	return errors.Join(errs...)
}

// checkCallback checks the gateway's base URL the agent posts to: http(s), a host, no
// query or fragment (the gateway appends its path).
func checkCallback(raw string) error {
	if len(raw) > maxCallbackURL {
		return fmt.Errorf("longer than %d bytes", maxCallbackURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want the gateway's http(s) base URL, as the agent reaches it")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("want a base URL without user, query or fragment: the gateway appends /targets/a2a/{agent}/push")
	}
	return nil
}

// Describe is `check`'s summary of the target: where it points, without its secrets.
func (c Config) Describe() string {
	c = c.WithDefaults()
	out := httptarget.SafeURL(c.URL) + ", busy " + describeBusy(c.Busy)
	if c.CallbackURL != "" {
		out += ", push to " + httptarget.SafeURL(c.CallbackURL)
	} else {
		out += ", polled every " + c.PollInterval.String()
	}
	return out
}

// CardURL is where the agent card is read: url itself when it names a JSON document,
// else url's path with /.well-known/agent-card.json appended (a base without a trailing
// slash keeps its last segment, unlike a relative reference).
func (c Config) CardURL() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return c.URL
	}
	if strings.HasSuffix(strings.ToLower(u.Path), ".json") {
		return c.URL
	}
	u.Path = strings.TrimRight(u.Path, "/") + cardPath
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + cardPath
	}
	return u.String()
}

// PushPath is the path of agentID's push notification endpoint on the gateway.
func PushPath(agentID string) string { return pathPrefix + agentID + pushPath }

// pushURL is where agentID's tasks push their notifications, "" without a callback_url.
func (c Config) pushURL(agentID string) string {
	if c.CallbackURL == "" {
		return ""
	}
	return strings.TrimRight(c.CallbackURL, "/") + PushPath(agentID)
}

// settings is how one a2a agent is reached: its own keys and the common ones used here.
type settings struct {
	Config
	Agent   string
	Timeout time.Duration
	Reply   string
}

// settingsOf is agent cfg's a2a target, with defaults.
func settingsOf(cfg agent.Config) (settings, error) {
	cfg = cfg.WithDefaults()
	c, ok := cfg.Target.Settings.(Config)
	if cfg.Target.Kind != Kind || !ok {
		return settings{}, fmt.Errorf("agent %q: target kind is %q, not a2a", cfg.ID, cfg.Target.Kind)
	}
	timeout := cfg.Target.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return settings{Config: c.WithDefaults(), Agent: cfg.ID, Timeout: timeout, Reply: cfg.Target.Reply}, nil
}

// Agent is an a2a agent's config for code that builds one (tests, tools): kind, presence
// and settings as the gateway's target table decodes them.
func Agent(id string, c Config) agent.Config {
	return agent.Config{ID: id, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}

// describeBusy is busy as check shows it: the default, then each priority that differs.
func describeBusy(b agent.Busy) string {
	out := b.Default
	for _, p := range []inbox.Priority{inbox.PriorityUrgent, inbox.PriorityHigh, inbox.PriorityMedium, inbox.PriorityLow} {
		if w := b.For(string(p)); w != b.Default {
			out += ", " + string(p) + " " + w
		}
	}
	return out
}
