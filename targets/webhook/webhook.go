// Package webhook is the webhook target: every signal is POSTed as JSON to the agent's
// URL, signed with Standard Webhooks headers (webhook-id is the signal id, stable across
// retries, so a receiver can drop a repeat). 2xx is accepted; 408, 409, 425, 429, 5xx and timeouts
// are retried by the dispatcher (Retry-After honoured); any other 4xx fails for good.
// Webhook agents report presence through the agent API's runs.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Kind is the target kind (agents[].target.kind: webhook).
const Kind = "webhook"

// PresenceSource: a webhook receiver reports presence through the agent API's runs, as
// a stream agent does; the gateway infers the rest from its wakes.
const PresenceSource = agent.PresenceRuns

// Recovery: a receiver's acceptance says nothing about what the agent did with a
// signal, so every in-flight signal of a crashed run is delivered again, marked
// recovered.
const Recovery = delivery.RedeliverInFlight

// Config is a webhook target's own keys under agents[].target.
type Config struct {
	URL    string        `yaml:"url"`    // the POST URL
	Secret secret.Secret `yaml:"secret"` // Standard Webhooks secret (whsec_…)
	// Secrets replaces Secret while a rotation overlaps: [new, old]; every delivery
	// carries a signature by each, so a receiver holding either verifies it.
	Secrets []secret.Secret          `yaml:"secrets"`
	Headers map[string]secret.Secret `yaml:"headers"` // extra request headers
}

// Validate reports problems by key, relative to agents[].target. How strong each
// secret is, CheckCredentials says.
func (c Config) Validate() error {
	errs := []error{httptarget.CheckURL("url", c.URL, Kind)}
	keys, problems := secret.Rotated("secret", c.Secret, c.Secrets, nil)
	errs = append(errs, problems...)
	if len(keys) == 0 && len(problems) == 0 {
		errs = append(errs, errors.New("secret: required for kind webhook (deliveries are always signed)"))
	}
	return errors.Join(errs...)
}

// CheckCredentials reports each secret too weak to sign with, by key (checked with the
// gateway's other credentials, after every section). A missing, doubled or empty secret
// is Validate's.
func (c Config) CheckCredentials() error {
	var errs []error
	if err := stdwebhooks.CheckSecret(c.Secret); err != nil && c.Secret != "" {
		errs = append(errs, fmt.Errorf("secret: %w", err))
	}
	for j, s := range c.Secrets {
		if err := stdwebhooks.CheckSecret(s); err != nil && s != "" {
			errs = append(errs, fmt.Errorf("secrets[%d]: %w", j, err))
		}
	}
	return errors.Join(errs...)
}

// Describe is `check`'s summary of the target: where it points, without its secrets.
func (c Config) Describe() string { return httptarget.SafeURL(c.URL) }

// Agent is a webhook agent's config for code that builds one (tests, tools): kind,
// presence and settings as the gateway's target table decodes them.
func Agent(id string, token secret.Secret, c Config) agent.Config {
	return agent.Config{ID: id, Token: token, Target: agent.TargetConfig{Kind: Kind, Presence: PresenceSource, Settings: c}}
}

// Target posts signals to one agent's webhook URL.
type Target struct {
	cfg     Config
	timeout time.Duration
	secrets [][]byte // new first; both sign while a rotation overlaps
	client  *http.Client
	now     func() time.Time
	traces  trace.TracerProvider
}

var _ delivery.Target = (*Target)(nil)

// Option configures a Target.
type Option func(*Target)

// WithClock injects the clock that stamps webhook-timestamp.
func WithClock(now func() time.Time) Option { return func(t *Target) { t.now = now } }

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(t *Target) { t.client = c } }

// WithTracerProvider makes every request a client span of tp carrying its traceparent
// (default: tracing off). url.full shows no path: a webhook URL's path may be its token.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(t *Target) { t.traces = tp } }

// New builds the target of one webhook agent.
func New(cfg agent.Config, opts ...Option) (*Target, error) {
	cfg = cfg.WithDefaults()
	c, ok := cfg.Target.Settings.(Config)
	if cfg.Target.Kind != Kind || !ok {
		return nil, fmt.Errorf("agent %q: target kind is %q, not webhook", cfg.ID, cfg.Target.Kind)
	}
	list, problems := secret.Rotated("target.secret", c.Secret, c.Secrets, stdwebhooks.CheckSecret)
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("agent %q: %w", cfg.ID, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("agent %q: target.secret: required", cfg.ID)
	}
	t := &Target{cfg: c, timeout: cfg.Target.Timeout, client: &http.Client{}, now: time.Now}
	for _, s := range list {
		key, _ := stdwebhooks.ParseSecret(s.Reveal()) // checked above
		t.secrets = append(t.secrets, key)
	}
	for _, o := range opts {
		o(t)
	}
	t.client = httptarget.Traced(t.client, t.traces)
	return t, nil
}

// Payload is the JSON body of a delivery.
type Payload struct {
	Type       string         `json:"type"` // always "signal"
	Agent      string         `json:"agent"`
	ResourceID string         `json:"resourceId"`
	ThreadID   string         `json:"threadId"`
	RunID      *string        `json:"runId"`
	Action     agent.Behavior `json:"action"`
	DeliverAs  string         `json:"deliverAs,omitempty"`
	Attempt    int            `json:"attempt"`
	RecordIDs  []string       `json:"recordIds"`
	Signal     agent.Signal   `json:"signal"`
	XML        string         `json:"xml"`
}

// NewPayload builds the body of d.
func NewPayload(d agent.Handoff) Payload {
	p := Payload{Type: "signal", Agent: d.Thread.Agent, ResourceID: d.Thread.Resource, ThreadID: d.Thread.Thread,
		Action: d.Behavior, DeliverAs: d.DeliverAs, Attempt: d.Attempt, RecordIDs: d.RecordIDs, Signal: d.Signal, XML: d.Signal.XML()}
	if d.RunID != "" {
		p.RunID = &d.RunID
	}
	if p.RecordIDs == nil {
		p.RecordIDs = []string{}
	}
	if p.Signal.Attributes == nil {
		p.Signal.Attributes = inbox.Attributes{}
	}
	if p.Signal.Metadata == nil {
		p.Signal.Metadata = map[string]any{}
	}
	return p
}

// Deliver posts d, signed.
func (t *Target) Deliver(ctx context.Context, d agent.Handoff) (agent.Result, error) {
	body, err := json.Marshal(NewPayload(d))
	if err != nil {
		return agent.Result{}, fmt.Errorf("encode signal %s: %w", d.Signal.ID, err)
	}
	ts := t.now()
	headers := make(map[string]string, len(t.cfg.Headers)+3)
	for k, v := range t.cfg.Headers {
		headers[k] = v.Reveal()
	}
	headers[stdwebhooks.HeaderID] = d.Signal.ID
	headers[stdwebhooks.HeaderTimestamp] = strconv.FormatInt(ts.Unix(), 10)
	// One v1 signature per secret, space-separated as Standard Webhooks allows: a
	// receiver still on the old secret and one already on the new both verify.
	sigs := make([]string, len(t.secrets))
	for i, key := range t.secrets {
		sigs[i] = stdwebhooks.Sign(key, d.Signal.ID, ts, body)
	}
	headers[stdwebhooks.HeaderSignature] = strings.Join(sigs, " ")
	_, res, err := httptarget.Post(ctx, t.client, t.cfg.URL, headers, body, t.timeout, t.now)
	return res, err
}

// Probe is `check --connect`'s try of a webhook target: HEAD, then OPTIONS when HEAD is
// not allowed; any answer below 500 means something listens there (a receiver may take
// POSTs only). key is the target's config path, named in what to fix.
func Probe(ctx context.Context, hc *http.Client, c Config, timeout time.Duration, key string) (string, error) {
	headers := secret.RevealMap(c.Headers)
	shown := httptarget.SafeURL(c.URL)
	method := http.MethodHead
	status, err := httptarget.Ask(ctx, hc, method, c.URL, headers, timeout)
	if err == nil && (status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented) {
		method = http.MethodOptions
		status, err = httptarget.Ask(ctx, hc, method, c.URL, headers, timeout)
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: check %s.url and that the receiver is running", err, key)
	case status >= 300 && status < 400:
		return "", fmt.Errorf("%s %s answered a redirect (HTTP %d), which deliveries never follow: set %s.url to the final URL", method, shown, status, key)
	case status >= 500:
		return "", fmt.Errorf("%s %s answered HTTP %d: the receiver is failing", method, shown, status)
	}
	return fmt.Sprintf("%s %s answered HTTP %d", method, shown, status), nil
}
