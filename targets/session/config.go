package session

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/stdwebhooks"
	"github.com/signalgate/signalgate/targets/httptarget"
)

// Defaults.
const (
	DefaultPollInterval = 30 * time.Second
	MinPollInterval     = time.Second
)

// Common are the keys both hosted kinds take under agents[].target.
type Common struct {
	APIKey  secret.Secret `yaml:"api_key"`
	BaseURL string        `yaml:"base_url"`
	AgentID string        `yaml:"agent_id"`
	// EnvironmentID is the environment sessions are created in.
	EnvironmentID string `yaml:"environment_id"`
	// WebhookSecret verifies the session webhooks (whsec_…, as the platform shows it).
	WebhookSecret secret.Secret `yaml:"webhook_secret"`
	// PollInterval is how often each thread with an open run is read (lease renewal, and
	// the fallback for a lost webhook).
	PollInterval time.Duration `yaml:"poll_interval"`
}

// WithDefaults fills base_url and poll_interval.
func (c Common) WithDefaults(baseURL string) Common {
	if c.BaseURL == "" {
		c.BaseURL = baseURL
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	return c
}

// Validate reports the common keys' problems for kind; environment says whether
// environment_id is required (a kind may take the environment otherwise).
func (c Common) Validate(kind string, environmentRequired bool) error {
	var errs []error
	if c.BaseURL != "" {
		errs = append(errs, httptarget.CheckURL("base_url", c.BaseURL, kind))
	}
	if c.APIKey == "" {
		errs = append(errs, fmt.Errorf("api_key: required for kind %s", kind))
	}
	if c.AgentID == "" {
		errs = append(errs, fmt.Errorf("agent_id: required for kind %s (the saved agent sessions run)", kind))
	}
	if environmentRequired && c.EnvironmentID == "" {
		errs = append(errs, fmt.Errorf("environment_id: required for kind %s (sessions are created in an environment)", kind))
	}
	if c.WebhookSecret == "" {
		errs = append(errs, fmt.Errorf("webhook_secret: required for kind %s (the session webhooks are presence)", kind))
	}
	if c.PollInterval < 0 || (c.PollInterval > 0 && c.PollInterval < MinPollInterval) {
		errs = append(errs, fmt.Errorf("poll_interval: at least %s", MinPollInterval))
	}
	return errors.Join(errs...)
}

// CheckCredentials refuses a webhook_secret not in the whsec_<base64> form: the only
// form both vendors' libraries read the same way.
func (c Common) CheckCredentials() error {
	s := c.WebhookSecret.Reveal()
	if s == "" {
		return nil
	}
	if !strings.HasPrefix(s, stdwebhooks.SecretPrefix) {
		return errors.New("webhook_secret: want the whsec_… secret exactly as the platform shows it")
	}
	if _, err := stdwebhooks.ParseSecret(s); err != nil {
		return fmt.Errorf("webhook_secret: %w", err)
	}
	return nil
}
