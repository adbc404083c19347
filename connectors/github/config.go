// Package github verifies GitHub webhook deliveries and maps them to connector
// items: CI failures and recoveries, pull request and issue activity, comments,
// reviews, pushes to the default branch, deploy failures, releases and security alerts.
package github

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"
)

// Source is the source GitHub events carry, and the connectors key.
const Source = "github"

// MinSecretBytes is the shortest webhook secret accepted.
const MinSecretBytes = 16

// DefaultBranch is assumed when a payload does not name the repository's default branch.
const DefaultBranch = "main"

// Config is one entry of `connectors.github` in config.yaml.
type Config struct {
	Name string `yaml:"name"`
	// Secret is the webhook secret; deliveries must carry X-Hub-Signature-256.
	Secret secret.Secret `yaml:"secret"`
	// Secrets replaces Secret while a rotation overlaps: [current, previous], either
	// one verifies.
	Secrets []secret.Secret `yaml:"secrets"`
	// BotLogin is the agent's GitHub login: its mentions raise priority, review
	// requests and assignments to it are notified, and its own comments are not routed.
	BotLogin string `yaml:"bot_login"`
	// BotTeam is a team slug whose review requests count as requests to the bot.
	BotTeam string `yaml:"bot_team"`
	// AllowedBots are bot logins whose comments are routed; other bots' comments
	// are stored but not routed.
	AllowedBots []string `yaml:"allowed_bots"`
	// DefaultBranch is used when a push payload lacks repository.default_branch.
	DefaultBranch string `yaml:"default_branch"`
	// AuthorizedAssociations are the author_association values whose comments and
	// reviews reach agents (routes and watches alike); others are stored ignored as
	// "author not authorized". Default OWNER, MEMBER, COLLABORATOR; [ANY] lets anyone.
	AuthorizedAssociations []string `yaml:"authorized_associations"`

	// Token (a personal access token or any token GitHub accepts) posts replies.
	Token secret.Secret `yaml:"token"`
	// App posts replies as a GitHub App installation instead of Token.
	App *AppConfig `yaml:"app"`
	// APIURL is the REST API base URL: GitHub Enterprise Server's
	// https://HOST/api/v3, or a test server. Empty: GitHub's.
	APIURL string `yaml:"api_url"`

	// WatchRepositories lets agents watch a whole repository (owner/repo), not only one
	// issue or pull request: every event of it reaches the watching thread.
	WatchRepositories bool `yaml:"watch_repositories"`

	// Backfill, when set, reads from GitHub's API the deliveries the gateway never
	// accepted (failed, timed out, never sent) and ingests them.
	Backfill *BackfillConfig `yaml:"backfill"`
}

// AppConfig is a GitHub App installation that posts replies.
type AppConfig struct {
	ID             int64         `yaml:"id"`
	PrivateKey     secret.Secret `yaml:"private_key"` // the App's PEM private key
	InstallationID int64         `yaml:"installation_id"`
}

// AnyAssociation, alone in authorized_associations, lets every author's comments through.
const AnyAssociation = "ANY"

// DefaultAuthorizedAssociations are the authors trusted when the config names none:
// the repository's owner, its organisation's members and its collaborators.
func DefaultAuthorizedAssociations() []string { return []string{"OWNER", "MEMBER", "COLLABORATOR"} }

// associations are GitHub's author_association values.
func associations() []string {
	return []string{"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN", "NONE"}
}

// DefaultAPIURL is GitHub's REST API.
const DefaultAPIURL = "https://api.github.com/"

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DefaultBranch == "" {
		c.DefaultBranch = DefaultBranch
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if len(c.AuthorizedAssociations) == 0 {
		c.AuthorizedAssociations = DefaultAuthorizedAssociations()
	}
	if c.Backfill != nil {
		b := c.Backfill.withDefaults()
		c.Backfill = &b
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/" // go-github joins paths onto it
	}
	return c
}

// VerifySecrets are the secrets a delivery may be signed with, current first.
func (c Config) VerifySecrets() []secret.Secret { return secret.Accepted(c.Secret, c.Secrets) }

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
	keys, problems := secret.Rotated("secret", c.Secret, c.Secrets, checkSecret)
	errs = append(errs, problems...)
	if len(keys) == 0 && len(problems) == 0 {
		errs = append(errs, errors.New("secret: required (unsigned GitHub deliveries are never accepted)"))
	}
	for i, b := range c.AllowedBots {
		if strings.TrimSpace(b) == "" {
			errs = append(errs, fmt.Errorf("allowed_bots[%d]: empty login", i))
		}
	}
	for i, a := range c.AuthorizedAssociations {
		switch v := strings.ToUpper(strings.TrimSpace(a)); {
		case v == AnyAssociation && len(c.AuthorizedAssociations) > 1:
			errs = append(errs, fmt.Errorf("authorized_associations[%d]: %s stands alone (it lets every author through)", i, AnyAssociation))
		case v != AnyAssociation && !slices.Contains(associations(), v):
			errs = append(errs, fmt.Errorf("authorized_associations[%d]: unknown %q (want %s, or [%s])", i, a, strings.Join(associations(), ", "), AnyAssociation))
		}
	}
	if c.Token != "" && c.App != nil {
		errs = append(errs, errors.New("token, app: set one of them (replies post either with a token or as an App installation)"))
	}
	if c.App != nil {
		errs = append(errs, c.App.validate())
	}
	if c.Backfill != nil {
		errs = append(errs, c.Backfill.validate(c)...)
	}
	if c.APIURL != "" {
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("api_url: want an http(s) URL, got %q", c.APIURL))
		}
	}
	return errors.Join(errs...)
}

func (a *AppConfig) validate() error {
	var errs []error
	if a.ID <= 0 {
		errs = append(errs, errors.New("app.id: required (the App's id, a positive number)"))
	}
	if a.InstallationID <= 0 {
		errs = append(errs, errors.New("app.installation_id: required (a positive number)"))
	}
	if a.PrivateKey == "" {
		errs = append(errs, errors.New("app.private_key: required (the App's PEM private key)"))
	} else if _, err := parseAppKey(a.PrivateKey); err != nil {
		errs = append(errs, fmt.Errorf("app.private_key: %w", err))
	}
	return errors.Join(errs...)
}

// parseAppKey reads an App's private key: GitHub issues PKCS#1 PEM ("RSA PRIVATE KEY");
// PKCS#8 is accepted too. The error never echoes the key.
func parseAppKey(s secret.Secret) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s.Reveal()))
	if block == nil {
		return nil, errors.New("not a PEM block (paste the .pem file GitHub gave, header lines included)")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not an RSA private key")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA private key (GitHub App keys are RSA)")
	}
	return rk, nil
}

// botName strips the "[bot]" suffix GitHub Apps carry in their login, so
// "acme-bot" and "acme-bot[bot]" name the same account and "@acme-bot" mentions it.
func botName(login string) string {
	return strings.ToLower(strings.TrimSuffix(login, "[bot]"))
}

// isBotLogin reports whether login is the configured bot.
func (c *Config) isBotLogin(login string) bool {
	return c.BotLogin != "" && login != "" && botName(login) == botName(c.BotLogin)
}

// authorized reports whether an author with association may reach agents.
func (c *Config) authorized(association string) bool {
	allowed := c.AuthorizedAssociations
	if len(allowed) == 0 {
		allowed = DefaultAuthorizedAssociations()
	}
	return slices.ContainsFunc(allowed, func(a string) bool {
		a = strings.ToUpper(strings.TrimSpace(a))
		return a == AnyAssociation || (association != "" && a == strings.ToUpper(association))
	})
}

// allowedBot reports whether a bot's comments are routed.
func (c *Config) allowedBot(login string) bool {
	for _, b := range c.AllowedBots {
		if botName(b) == botName(login) {
			return true
		}
	}
	return false
}

// mentionsBot reports whether text contains "@bot_login" as a whole mention.
func (c *Config) mentionsBot(text string) bool {
	if c.BotLogin == "" {
		return false
	}
	needle := "@" + botName(c.BotLogin)
	t := strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(t[i:], needle)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(needle)
		before := start == 0 || !isLoginChar(t[start-1])
		after := end == len(t) || !isLoginChar(t[end]) || strings.HasPrefix(t[end:], "[bot]")
		if before && after {
			return true
		}
		i = end
	}
}

func isLoginChar(b byte) bool {
	return b == '-' || b == '_' || b == '/' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// ConnectorName names the connector in paths and errors.
func (c Config) ConnectorName() string { return c.Name }
