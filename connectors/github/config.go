// Package github verifies GitHub webhook deliveries and maps them to connector
// items: CI failures and recoveries, pull request and issue activity, comments,
// reviews, pushes to the default branch, deploy failures, releases and security alerts.
package github

import (
	"errors"
	"fmt"
	"strings"

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
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DefaultBranch == "" {
		c.DefaultBranch = DefaultBranch
	}
	return c
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Name) == "" {
		errs = append(errs, errors.New("name: required"))
	} else if strings.ContainsAny(c.Name, "/?#% ") {
		errs = append(errs, fmt.Errorf("name: %q must not contain '/', '?', '#', '%%' or spaces (it is a URL path segment)", c.Name))
	}
	if c.Secret == "" {
		errs = append(errs, errors.New("secret: required (unsigned GitHub deliveries are never accepted)"))
	} else if len(c.Secret) < MinSecretBytes {
		errs = append(errs, fmt.Errorf("secret: must be at least %d bytes (one signed delivery is enough to guess a shorter one offline)", MinSecretBytes))
	}
	for i, b := range c.AllowedBots {
		if strings.TrimSpace(b) == "" {
			errs = append(errs, fmt.Errorf("allowed_bots[%d]: empty login", i))
		}
	}
	return errors.Join(errs...)
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
