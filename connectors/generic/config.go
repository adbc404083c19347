// Package generic accepts signed notifications from any system that speaks
// Standard Webhooks: either a notification-shaped JSON body, or any JSON document
// mapped by per-connector field paths.
package generic

import (
	"cmp"
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

// Config is one entry of `connectors.generic` in config.yaml.
type Config struct {
	Name string `yaml:"name"`
	// Preset names how the sender signs and what its payload means
	// (standard-webhooks when unset).
	Preset string `yaml:"preset"`
	// Verify is a custom signature scheme, instead of a preset.
	Verify *Verify `yaml:"verify"`
	// Secret is the key the preset or scheme verifies with: for Standard Webhooks
	// "whsec_<base64>" or, without the prefix, raw bytes.
	Secret secret.Secret `yaml:"secret"`
	// Secrets replaces Secret while a rotation overlaps: [current, previous], either
	// one verifies.
	Secrets []secret.Secret `yaml:"secrets"`
	// PublicURL is the full URL a URL-signing sender (Twilio) posts to; the request's
	// own URL when unset.
	PublicURL string `yaml:"public_url"`
	// Mapping, when set, reads the body as an arbitrary JSON document.
	Mapping *Mapping `yaml:"mapping"`
	// DefaultKind is used when the body (or mapping) yields no kind.
	DefaultKind string `yaml:"default_kind"`
	// DefaultPriority is used when the body yields none (medium when unset).
	DefaultPriority inbox.Priority `yaml:"default_priority"`
}

// VerifySecrets are the secrets a delivery may be signed with, current first.
func (c Config) VerifySecrets() []secret.Secret { return secret.Accepted(c.Secret, c.Secrets) }

// Mapping reads notification fields out of a foreign JSON body by dotted paths
// ("$.type", "$.data.description"). Unset paths leave the field empty.
type Mapping struct {
	Kind string `yaml:"kind"`
	// KindSuffix is appended to the kind after a dot (Linear's type + action).
	KindSuffix  string `yaml:"kind_suffix"`
	Summary     string `yaml:"summary"`
	Priority    string `yaml:"priority"`
	DedupeKey   string `yaml:"dedupe_key"`
	CoalesceKey string `yaml:"coalesce_key"`
	// SourceID is the provider's id of the thing (watches follow it).
	SourceID string `yaml:"source_id"`
	// Payload picks the part of the body kept for agents; the whole body when unset.
	Payload string `yaml:"payload"`
	Author  string `yaml:"author"`
	URL     string `yaml:"url"`
	Repo    string `yaml:"repo"`
	Number  string `yaml:"number"`
	Branch  string `yaml:"branch"`
	// Priorities translate the sender's values ("critical", "warning") to ours;
	// values that are neither listed nor a priority name get the default.
	Priorities map[string]inbox.Priority `yaml:"priorities"`
	// Attributes are extra record attributes: name → path (sorted by name).
	Attributes map[string]string `yaml:"attributes"`
	// Fields are values routes match on with `match.extra`: name → path.
	Fields map[string]string `yaml:"fields"`
}

// Validate reports problems with key paths relative to the list entry.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := connectors.CheckName(c.Name); err != nil {
		errs = append(errs, err)
	}
	p, err := c.preset()
	if err != nil {
		errs = append(errs, err)
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("public_url: want an absolute http(s) URL")
		} else if !p.signsURL && p.name != "" {
			add("public_url: only the twilio preset signs the URL")
		}
	}
	var check func(secret.Secret) error // the preset's or scheme's own reading of a key
	if p.secret != nil {
		check = func(s secret.Secret) error { _, err := p.secret(s.Reveal()); return err }
	}
	keys, problems := secret.Rotated("secret", c.Secret, c.Secrets, check)
	errs = append(errs, problems...)
	if len(keys) == 0 && len(problems) == 0 {
		add("secret: required (unsigned deliveries are never accepted)")
	}
	if c.DefaultPriority != "" && !c.DefaultPriority.Valid() {
		add("default_priority: unknown %q (want low, medium, high or urgent)", c.DefaultPriority)
	}
	if m := c.Mapping; m != nil {
		paths := m.paths()
		for _, key := range sortedKeys(paths) {
			if p := paths[key]; p != "" {
				if _, err := ParsePath(p); err != nil {
					add("mapping.%s: %w", key, err)
				}
			}
		}
		for _, section := range []struct {
			key   string
			named map[string]string
		}{{"attributes", m.Attributes}, {"fields", m.Fields}} {
			for _, name := range sortedKeys(section.named) {
				if _, err := ParsePath(section.named[name]); err != nil {
					add("mapping.%s.%s: %w", section.key, name, err)
				}
			}
		}
		for _, from := range slices.Sorted(maps.Keys(m.Priorities)) {
			if to := m.Priorities[from]; !to.Valid() {
				add("mapping.priorities.%s: unknown %q (want low, medium, high or urgent)", from, to)
			}
		}
	}
	return errors.Join(errs...)
}

// preset resolves the connector's preset or custom scheme; errors name the key.
func (c Config) preset() (preset, error) {
	if c.Verify != nil {
		if c.Preset != "" {
			return preset{}, fmt.Errorf("preset: %q and verify are both set (verify is a custom scheme: set one)", c.Preset)
		}
		if errs := c.Verify.validate(); len(errs) > 0 {
			return preset{}, errors.Join(errs...)
		}
		return customPreset(c.Verify), nil
	}
	p, ok := presets()[cmp.Or(c.Preset, PresetStandardWebhooks)]
	if !ok {
		return preset{}, fmt.Errorf("preset: unknown %q (want one of %s)", c.Preset, strings.Join(presetNames(), ", "))
	}
	return p, nil
}

// paths lists the optional single-field paths by config key.
func (m *Mapping) paths() map[string]string {
	return map[string]string{
		"kind": m.Kind, "kind_suffix": m.KindSuffix, "summary": m.Summary, "priority": m.Priority, "dedupe_key": m.DedupeKey,
		"coalesce_key": m.CoalesceKey, "source_id": m.SourceID, "payload": m.Payload, "author": m.Author, "url": m.URL,
		"repo": m.Repo, "number": m.Number, "branch": m.Branch,
	}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// ConnectorName names the connector in paths and errors.
func (c Config) ConnectorName() string { return c.Name }
