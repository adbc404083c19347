// Package alertmanager takes Prometheus Alertmanager's webhook notifications (version
// 4) and Grafana's alerting webhook (which extends them): every alert of a notification
// is an item in a net-state lane keyed by its fingerprint, so an alert that fires and
// resolves before the agent hears of it reaches the agent not at all, and one the agent
// was told of is followed by a short resolution. An agent answers an alert with a
// silence, created in Alertmanager through the reply outbox.
package alertmanager

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/secret"
)

// Defaults of a connector's optional keys.
const (
	DefaultPriorityLabel   = "severity"
	DefaultSignatureHeader = "X-Grafana-Alerting-Signature"
	// DefaultMaxSilence bounds the silences an agent may create: a day, so a forgotten
	// silence cannot hide an outage for a week.
	DefaultMaxSilence = 24 * time.Hour
	// MinSilence is the shortest silence an agent may create.
	MinSilence = time.Minute
	// GrafanaTolerance is how far Grafana's signed timestamp may be from now, either way.
	GrafanaTolerance = 5 * time.Minute
	minSecretLen     = 16
)

// DefaultPriorities map the priority label's values to priorities; any other value is
// medium.
func DefaultPriorities() map[string]inbox.Priority {
	return map[string]inbox.Priority{"critical": inbox.PriorityUrgent, "warning": inbox.PriorityHigh}
}

// Config is one entry of `connectors.alertmanager` in config.yaml.
type Config struct {
	Name string `yaml:"name"`
	// BearerToken is what Alertmanager's http_config.authorization (or Grafana's
	// Authorization header) sends: "Authorization: Bearer <token>".
	BearerToken secret.Secret `yaml:"bearer_token"`
	// BasicAuth is the alternative Alertmanager's http_config.basic_auth sends.
	BasicAuth *BasicAuth `yaml:"basic_auth"`
	// Grafana is the HMAC signature of Grafana's webhook contact point, when configured
	// there.
	Grafana *GrafanaHMAC `yaml:"grafana_hmac"`
	// APIURL is Alertmanager's base URL (http://alertmanager:9093), where silences are
	// created; for Grafana's own Alertmanager, <grafana>/api/alertmanager/grafana.
	APIURL string `yaml:"api_url"`
	// APIToken, when set, is sent as "Authorization: Bearer" to the API (Grafana's
	// service account token, or a proxy in front of Alertmanager).
	APIToken secret.Secret `yaml:"api_token"`
	// MaxSilence bounds the duration of a silence an agent asks for.
	MaxSilence time.Duration `yaml:"max_silence"`
	// PriorityLabel is the label whose value gives an alert's priority.
	PriorityLabel string `yaml:"priority_label"`
	// Priorities map PriorityLabel's values (case-insensitively) to priorities.
	Priorities map[string]inbox.Priority `yaml:"priorities"`
}

// BasicAuth is HTTP basic authentication of the webhook.
type BasicAuth struct {
	Username string        `yaml:"username"`
	Password secret.Secret `yaml:"password"`
}

// GrafanaHMAC is Grafana's webhook HMAC signature: the hex HMAC-SHA256 of the body
// (or of "<timestamp>:<body>" when a timestamp header is configured) under Secret.
type GrafanaHMAC struct {
	Secret secret.Secret `yaml:"secret"`
	// Header carries the signature (DefaultSignatureHeader when unset).
	Header string `yaml:"header"`
	// TimestampHeader, when set, carries the signed Unix time, which must be within
	// GrafanaTolerance of now.
	TimestampHeader string `yaml:"timestamp_header"`
}

// ConnectorName is the configured name.
func (c Config) ConnectorName() string { return c.Name }

// WithDefaults fills the optional keys.
func (c Config) WithDefaults() Config {
	if c.MaxSilence == 0 {
		c.MaxSilence = DefaultMaxSilence
	}
	if c.PriorityLabel == "" {
		c.PriorityLabel = DefaultPriorityLabel
	}
	if c.Priorities == nil {
		c.Priorities = DefaultPriorities()
	} else {
		lower := make(map[string]inbox.Priority, len(c.Priorities))
		for k, v := range c.Priorities {
			lower[strings.ToLower(k)] = v
		}
		c.Priorities = lower
	}
	if c.Grafana != nil && c.Grafana.Header == "" {
		g := *c.Grafana
		g.Header = DefaultSignatureHeader
		c.Grafana = &g
	}
	return c
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := connectors.CheckName(c.Name); err != nil {
		errs = append(errs, err)
	}
	if c.BearerToken == "" && c.BasicAuth == nil && c.Grafana == nil {
		add("bearer_token: required (or basic_auth, or grafana_hmac): an unauthenticated webhook would let anyone page the agent")
	}
	if c.BearerToken != "" && len(c.BearerToken) < minSecretLen {
		add("bearer_token: at least %d characters", minSecretLen)
	}
	if c.BearerToken != "" && c.BasicAuth != nil {
		add("bearer_token, basic_auth: set one or the other (Alertmanager sends one Authorization header)")
	}
	if b := c.BasicAuth; b != nil {
		if b.Username == "" || strings.Contains(b.Username, ":") {
			add("basic_auth.username: required, without ':'")
		}
		if len(b.Password) < minSecretLen {
			add("basic_auth.password: at least %d characters", minSecretLen)
		}
	}
	if g := c.Grafana; g != nil {
		if len(g.Secret) < minSecretLen {
			add("grafana_hmac.secret: at least %d characters", minSecretLen)
		}
		for key, h := range map[string]string{"header": g.Header, "timestamp_header": g.TimestampHeader} {
			if h != "" && !validHeaderName(h) {
				add("grafana_hmac.%s: %q is not an HTTP header name", key, h)
			}
		}
	}
	if c.APIURL != "" {
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			add("api_url: want an http(s) base URL without query or fragment, like http://alertmanager:9093")
		} else if u.User != nil {
			add("api_url: credentials belong in api_token, not the URL")
		}
	}
	if c.APIToken != "" && c.APIURL == "" {
		add("api_token: needs api_url")
	}
	if c.MaxSilence < 0 || (c.MaxSilence > 0 && c.MaxSilence < MinSilence) {
		add("max_silence: at least %s", MinSilence)
	}
	if c.PriorityLabel != "" && !validLabelName(c.PriorityLabel) {
		add("priority_label: %q is not a label name", c.PriorityLabel)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Priorities)) {
		if p := c.Priorities[k]; !p.Valid() {
			add("priorities.%s: unknown %q (want low, medium, high or urgent)", k, p)
		}
	}
	return errors.Join(errs...)
}

func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// validLabelName is Prometheus's label name rule.
func validLabelName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
