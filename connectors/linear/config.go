// Package linear is Linear, both ways: its signed webhooks (issues, comments, projects
// and agent sessions) become items, and the agent's answers go back through Linear's
// GraphQL API as comments threaded under the comment that asked, or as agent activities
// on the agent session that asked. Issues (ENG-123) and projects can be watched.
package linear

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// Source is the source Linear events carry, and the connectors key.
const Source = "linear"

// VerifiedBy is the provenance of a delivery whose Linear-Signature verified.
const VerifiedBy = "hmac-linear"

// MinSecretBytes is the shortest webhook signing secret accepted (Linear's are longer).
const MinSecretBytes = 16

// DefaultAPIURL is Linear's GraphQL endpoint.
const DefaultAPIURL = "https://api.linear.app/graphql"

// Config is one entry of `connectors.linear` in config.yaml: one Linear webhook (an
// OAuth application's, for agent sessions) and the credentials its answers post with.
type Config struct {
	Name string `yaml:"name"`
	// WebhookSecret is the webhook's signing secret; deliveries must carry a valid
	// Linear-Signature.
	WebhookSecret secret.Secret `yaml:"webhook_secret"`
	// WebhookSecrets replaces WebhookSecret while a rotation overlaps: [current,
	// previous], either one verifies.
	WebhookSecrets []secret.Secret `yaml:"webhook_secrets"`
	// AccessToken is the OAuth application's access token, installed with actor=app:
	// answers post as the application's agent (and agent activities need it).
	AccessToken secret.Secret `yaml:"access_token"`
	// APIKey is a personal API key instead: answers post as its user, as comments only.
	APIKey secret.Secret `yaml:"api_key"`
	// APIURL is the GraphQL endpoint; empty: Linear's.
	APIURL string `yaml:"api_url"`
	// OrganizationID pins the workspace whose events are heard: an OAuth application's
	// webhooks carry every installing workspace's events, all signed with one secret.
	// Empty: the workspace of the credentials (viewer.organization).
	OrganizationID string `yaml:"organization_id"`
	// AllowGuests lets the workspace's guests reach the agent too; by default only its
	// members do.
	AllowGuests bool `yaml:"allow_guests"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	return c
}

// ConnectorName names the connector in paths and errors.
func (c Config) ConnectorName() string { return c.Name }

// VerifySecrets are the secrets a delivery may be signed with, current first.
func (c Config) VerifySecrets() []secret.Secret {
	return secret.Accepted(c.WebhookSecret, c.WebhookSecrets)
}

// token is the credential answers and look-ups are made with, as Linear's
// Authorization header takes it: "Bearer <token>" for OAuth, the bare key for an API
// key; "" when the connector has none.
func (c Config) token() string {
	switch {
	case c.AccessToken != "":
		return "Bearer " + c.AccessToken.Reveal()
	case c.APIKey != "":
		return c.APIKey.Reveal()
	}
	return ""
}

var organizationID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func checkSecret(s secret.Secret) error {
	if len(s) < MinSecretBytes {
		return fmt.Errorf("must be at least %d bytes (one signed delivery is enough to guess a shorter one offline)", MinSecretBytes)
	}
	return nil
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	if err := connectors.CheckName(c.Name); err != nil {
		errs = append(errs, err)
	}
	keys, problems := secret.Rotated("webhook_secret", c.WebhookSecret, c.WebhookSecrets, checkSecret)
	errs = append(errs, problems...)
	if len(keys) == 0 && len(problems) == 0 {
		errs = append(errs, errors.New("webhook_secret: required (unsigned Linear deliveries are never accepted)"))
	}
	if c.AccessToken != "" && c.APIKey != "" {
		errs = append(errs, errors.New("access_token, api_key: set one of them (answers post either as the OAuth application or as the key's user)"))
	}
	if c.AccessToken == "" && c.APIKey == "" && c.OrganizationID == "" {
		errs = append(errs, errors.New("organization_id: required without access_token or api_key (the workspace whose members may reach the agent)"))
	}
	if c.OrganizationID != "" && !organizationID.MatchString(c.OrganizationID) {
		errs = append(errs, fmt.Errorf("organization_id: %q is not a Linear organization id (a UUID)", c.OrganizationID))
	}
	if c.APIURL != "" {
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("api_url: want an http(s) URL, got %q", c.APIURL))
		}
	}
	return errors.Join(errs...)
}
