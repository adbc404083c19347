// Package slack receives Slack Events API events, over signed HTTP posts or a
// Socket Mode connection, and maps mentions, direct messages and channel messages
// to connector items.
package slack

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/secret"

	"github.com/signalgate/signalgate/inbox"
)

// Kinds the connector produces (before the per-connector `kinds` renames).
const (
	KindMention = "mention"
	KindDM      = "dm"
	KindGroupDM = "group-dm"
	KindMessage = "message"
)

// knownKinds lists the kinds `kinds` and `priorities` may name.
func knownKinds() []string { return []string{KindMention, KindDM, KindGroupDM, KindMessage} }

// defaultPriorities: someone talking to the agent is high, channel chatter is low.
func defaultPriorities() map[string]inbox.Priority {
	return map[string]inbox.Priority{
		KindMention: inbox.PriorityHigh,
		KindDM:      inbox.PriorityHigh,
		KindGroupDM: inbox.PriorityHigh,
		KindMessage: inbox.PriorityLow,
	}
}

// DefaultIgnoreSubtypes are message subtypes that carry no new human words:
// edits, deletions, membership and channel housekeeping, and other bots' posts.
func DefaultIgnoreSubtypes() []string {
	return []string{
		"message_changed", "message_deleted", "message_replied", "bot_message",
		"channel_join", "channel_leave", "group_join", "group_leave",
		"channel_topic", "channel_purpose", "channel_name", "channel_archive", "channel_unarchive",
		"group_topic", "group_purpose", "group_name", "group_archive", "group_unarchive",
		"channel_convert_to_private", "channel_convert_to_public", "channel_posting_permissions",
		"pinned_item", "unpinned_item", "ekm_access_denied", "reminder_add",
	}
}

// MinSecretBytes is the shortest signing secret accepted, as for every webhook secret.
const MinSecretBytes = 16

// Config is one entry of `connectors.slack` in config.yaml.
type Config struct {
	Name string `yaml:"name"`
	// SigningSecret verifies HTTP deliveries (v0 signatures); required unless SocketMode.
	SigningSecret secret.Secret `yaml:"signing_secret"`
	// SigningSecrets replaces SigningSecret while a rotation overlaps: [current,
	// previous], either one verifies.
	SigningSecrets []secret.Secret `yaml:"signing_secrets"`
	// BotUserID is the app's bot user (U…): its mentions make `mention` items and
	// its own messages are not routed. When unset, the bot user of the event's
	// authorizations is used.
	BotUserID string `yaml:"bot_user_id"`
	// BotToken (xoxb-…) enables user and channel names through the Web API.
	BotToken secret.Secret `yaml:"bot_token"`
	// AppToken (xapp-…) opens Socket Mode connections.
	AppToken secret.Secret `yaml:"app_token"`
	// SocketMode receives events over a WebSocket instead of a public URL.
	SocketMode bool `yaml:"socket_mode"`
	// APIURL overrides the Web API base URL (tests, proxies).
	APIURL string `yaml:"api_url"`
	// Kinds renames the connector's kinds: {mention: slack-mention}.
	Kinds map[string]string `yaml:"kinds"`
	// Priorities overrides the default priority per kind (keyed by the default kind name).
	Priorities map[string]inbox.Priority `yaml:"priorities"`
	// IgnoreSubtypes are message subtypes stored but not routed; nil means the
	// defaults, an empty list ignores none.
	IgnoreSubtypes []string `yaml:"ignore_subtypes"`
	// AllowMentions lets an agent's replies mention people and channels (<@U…>,
	// <!here>); by default every <, > and & of a reply is escaped.
	AllowMentions bool `yaml:"allow_mentions"`
	// AllowedBots are bots (bot id B…, user id or name) whose messages are routed
	// even though bot_message is ignored.
	AllowedBots []string `yaml:"allowed_bots"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.IgnoreSubtypes == nil {
		c.IgnoreSubtypes = DefaultIgnoreSubtypes()
	}
	if c.APIURL != "" && !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/" // slack-go joins method names onto it
	}
	return c
}

// VerifySecrets are the signing secrets a request may be signed with, current first;
// none when events arrive over Socket Mode only.
func (c Config) VerifySecrets() []secret.Secret {
	return secret.Accepted(c.SigningSecret, c.SigningSecrets)
}

func checkSigningSecret(s secret.Secret) error {
	if len(s) < MinSecretBytes {
		return fmt.Errorf("must be at least %d bytes (Slack issues 32 hex characters; one signed request is enough to guess a shorter one offline)", MinSecretBytes)
	}
	return nil
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := connectors.CheckName(c.Name); err != nil {
		errs = append(errs, err)
	}
	keys, problems := secret.Rotated("signing_secret", c.SigningSecret, c.SigningSecrets, checkSigningSecret)
	errs = append(errs, problems...)
	if len(keys) == 0 && len(problems) == 0 && !c.SocketMode {
		add("signing_secret: required (unsigned Slack requests are never accepted) unless socket_mode is true")
	}
	if c.SocketMode {
		if c.AppToken == "" {
			add("app_token: required with socket_mode (an app-level token, xapp-…)")
		} else if !strings.HasPrefix(c.AppToken.Reveal(), "xapp-") {
			add("app_token: want an app-level token starting with xapp-")
		}
	}
	if c.BotUserID != "" && !isSlackID(c.BotUserID) {
		add("bot_user_id: %q is not a Slack user id (like U0123ABCD)", c.BotUserID)
	}
	if c.APIURL != "" {
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("api_url: want an http(s) URL, got %q", c.APIURL)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Kinds)) {
		if !slices.Contains(knownKinds(), k) {
			add("kinds.%s: unknown kind (want %s)", k, strings.Join(knownKinds(), ", "))
		} else if v := c.Kinds[k]; strings.TrimSpace(v) == "" || strings.ContainsAny(v, " \t\n") {
			add("kinds.%s: want a kind name without spaces, got %q", k, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Priorities)) {
		if !slices.Contains(knownKinds(), k) {
			add("priorities.%s: unknown kind (want %s)", k, strings.Join(knownKinds(), ", "))
		} else if p := c.Priorities[k]; !p.Valid() {
			add("priorities.%s: unknown %q (want low, medium, high or urgent)", k, p)
		}
	}
	for i, s := range c.IgnoreSubtypes {
		if strings.TrimSpace(s) == "" {
			add("ignore_subtypes[%d]: empty subtype", i)
		}
	}
	for i, b := range c.AllowedBots {
		if strings.TrimSpace(b) == "" {
			add("allowed_bots[%d]: empty bot", i)
		}
	}
	return errors.Join(errs...)
}

// isSlackID reports an upper-case alphanumeric id such as U0123ABCD.
func isSlackID(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// kind returns the configured name of a default kind.
func (c *Config) kind(k string) string {
	if v := c.Kinds[k]; v != "" {
		return v
	}
	return k
}

// priority returns the configured priority of a default kind.
func (c *Config) priority(k string) inbox.Priority {
	if p, ok := c.Priorities[k]; ok {
		return p
	}
	return defaultPriorities()[k]
}

func (c *Config) ignoredSubtype(s string) bool {
	return s != "" && slices.ContainsFunc(c.IgnoreSubtypes, func(v string) bool { return strings.EqualFold(v, s) })
}

// allowedBot reports whether any of the bot's identifiers is listed.
func (c *Config) allowedBot(ids ...string) bool {
	for _, b := range c.AllowedBots {
		for _, id := range ids {
			if id != "" && strings.EqualFold(strings.TrimSpace(b), id) {
				return true
			}
		}
	}
	return false
}

// ConnectorName names the connector in paths and errors.
func (c Config) ConnectorName() string { return c.Name }
