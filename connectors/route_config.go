package connectors

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
)

// RouteConfig is one entry of the `routes:` list in config.yaml.
type RouteConfig struct {
	Name   string       `yaml:"name" json:"name"`
	Match  RouteMatch   `yaml:"match" json:"match"`
	Thread ThreadConfig `yaml:"thread" json:"thread"`
	// Priority, when set, replaces the connector's priority.
	Priority inbox.Priority `yaml:"priority" json:"priority,omitempty"`
	// Attributes are merged into the item's (route values win), in config order.
	Attributes RouteAttributes `yaml:"attributes" json:"attributes,omitempty"`
	// DeliverAs turns the item into user-authored input: message | queued-message.
	DeliverAs string `yaml:"deliver_as" json:"deliverAs,omitempty"`
	// NetKey, State and RestState, when set, are templates over Fields (like thread's)
	// that put the item in a net-state lane, each replacing the connector's value.
	NetKey    string `yaml:"net_key" json:"netKey,omitempty"`
	State     string `yaml:"state" json:"state,omitempty"`
	RestState string `yaml:"rest_state" json:"restState,omitempty"`
	// Watched keeps the route to the threads that watch the item (package watch): a
	// thread it renders gets the item only while a live watch of that thread matches it.
	Watched bool `yaml:"watched" json:"watched,omitempty"`
}

// RouteMatch selects items. Empty fields match anything; a list matches any of
// its values. Values compare case-insensitively (GitHub logins and repos, email
// addresses and Slack ids are all case-insensitive or upper-case by convention),
// and a value containing *, ? or [ is a path.Match pattern ("acme/*", "release/*").
type RouteMatch struct {
	Source      inbox.StringList `yaml:"source" json:"source,omitempty"`
	Connector   inbox.StringList `yaml:"connector" json:"connector,omitempty"`
	Kind        inbox.StringList `yaml:"kind" json:"kind,omitempty"`
	Repo        inbox.StringList `yaml:"repo" json:"repo,omitempty"`
	Number      inbox.StringList `yaml:"number" json:"number,omitempty"`
	Branch      inbox.StringList `yaml:"branch" json:"branch,omitempty"`
	Author      inbox.StringList `yaml:"author" json:"author,omitempty"`
	Labels      inbox.StringList `yaml:"labels" json:"labels,omitempty"` // any of them
	Team        inbox.StringList `yaml:"team" json:"team,omitempty"`
	Channel     inbox.StringList `yaml:"channel" json:"channel,omitempty"`
	ChannelType inbox.StringList `yaml:"channel_type" json:"channelType,omitempty"`
	User        inbox.StringList `yaml:"user" json:"user,omitempty"`
	Mailbox     inbox.StringList `yaml:"mailbox" json:"mailbox,omitempty"`
	From        inbox.StringList `yaml:"from" json:"from,omitempty"`
	Subject     inbox.StringList `yaml:"subject" json:"subject,omitempty"`
	// Extra matches connector-specific fields (Fields.Extra), e.g. generic field paths.
	Extra map[string]inbox.StringList `yaml:"extra" json:"extra,omitempty"`
	// When is an expression (package condition, RouteEnv) that must also hold.
	When string `yaml:"when" json:"when,omitempty"`
}

// ThreadConfig names the thread a route feeds; each part is a text/template over
// Fields ({{.Repo}}, {{.Number}}, {{.Team}}, {{.User}}, {{.Extra.customer}}…).
type ThreadConfig struct {
	Agent    string `yaml:"agent" json:"agent"`
	Resource string `yaml:"resource" json:"resource"`
	Thread   string `yaml:"thread" json:"thread"`
}

// RouteAttributes is an ordered attribute list that YAML spells as a mapping;
// signals render attributes in order, so the config order is kept.
type RouteAttributes inbox.Attributes

// UnmarshalYAML reads a mapping of scalars, keeping key order.
func (a *RouteAttributes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of names to values", n.Line)
	}
	out := inbox.Attributes{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: attribute %q: want a string, number or boolean", v.Line, k.Value)
		}
		var val any
		switch v.Tag {
		case "!!null":
			continue
		case "!!bool":
			b, err := strconv.ParseBool(v.Value)
			if err != nil {
				return fmt.Errorf("line %d: attribute %q: %w", v.Line, k.Value, err)
			}
			val = b
		case "!!int":
			n, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil {
				return fmt.Errorf("line %d: attribute %q: %w", v.Line, k.Value, err)
			}
			val = n
		case "!!float":
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return fmt.Errorf("line %d: attribute %q: %w", v.Line, k.Value, err)
			}
			val = f
		default:
			val = v.Value
		}
		out = out.Set(k.Value, val)
	}
	*a = RouteAttributes(out)
	return nil
}

// MarshalJSON keeps the order.
func (a RouteAttributes) MarshalJSON() ([]byte, error) { return inbox.Attributes(a).MarshalJSON() }

// UnmarshalJSON keeps the order.
func (a *RouteAttributes) UnmarshalJSON(b []byte) error {
	return (*inbox.Attributes)(a).UnmarshalJSON(b)
}

// templateFuncs are the helpers thread templates may call.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"lower": strings.ToLower,
		"upper": strings.ToUpper,
		// Argument order suits pipelines: {{.Repo | replace "/" "-"}}.
		"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
		"default": func(def string, v any) string {
			if s := fmt.Sprint(v); v != nil && s != "" && s != "0" {
				return s
			}
			return def
		},
	}
}

func parseThreadTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=zero").Funcs(templateFuncs()).Parse(text)
	if err != nil {
		return nil, err
	}
	// A dry run over empty fields catches {{.Rpo}} at config time, not at 3 a.m.
	if err := t.Execute(&strings.Builder{}, Fields{}); err != nil {
		return nil, err
	}
	return t, nil
}

// agentOnly reports a thread naming its agent alone: the item's default thread.
func (t ThreadConfig) agentOnly() bool {
	return strings.TrimSpace(t.Resource) == "" && strings.TrimSpace(t.Thread) == ""
}

// Validate reports problems with key paths relative to the route's list entry.
// match.source must name one of sources (the configured integration kinds'), or be a
// pattern; with no sources given, any is accepted. A route naming only its agent takes
// each item's default thread (Item.DefaultResource, DefaultThread).
func (rc RouteConfig) Validate(agents, sources []string) error {
	return rc.validate(agents, sources, nil)
}

func (rc RouteConfig) validate(agents, sources, defaultThreads []string) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(rc.Name) == "" {
		add("name: required")
	}
	for i, s := range rc.Match.Source {
		if len(sources) > 0 && !slices.Contains(sources, strings.ToLower(s)) && !isPattern(s) {
			add("match.source[%d]: unknown source %q (want %s)", i, s, strings.Join(sources, ", "))
		}
	}
	lists := rc.Match.lists()
	for _, key := range slices.Sorted(maps.Keys(lists)) {
		for i, v := range lists[key] {
			if strings.TrimSpace(v) == "" {
				add("match.%s[%d]: empty value", key, i)
			} else if _, err := path.Match(strings.ToLower(v), ""); err != nil {
				add("match.%s[%d]: bad pattern %q: %w", key, i, v, err)
			}
		}
	}
	if rc.Match.When != "" {
		if _, err := condition.Compile(rc.Match.When, condition.RouteEnv{}); err != nil {
			add("match.when: %w", err)
		}
	}
	// A route naming only its agent feeds the kind's default thread of each item.
	agentOnly := rc.Thread.agentOnly()
	if agentOnly && defaultThreads != nil {
		if len(rc.Match.Source) == 0 {
			add("thread.resource, thread.thread: required unless match.source names only kinds with a default thread (%s)", strings.Join(defaultThreads, ", "))
		}
		for i, s := range rc.Match.Source {
			if !slices.Contains(defaultThreads, strings.ToLower(s)) {
				add("match.source[%d]: %q has no default thread: name thread.resource and thread.thread (kinds with one: %s)", i, s, strings.Join(defaultThreads, ", "))
			}
		}
	}
	for _, part := range []struct{ key, text string }{
		{"agent", rc.Thread.Agent}, {"resource", rc.Thread.Resource}, {"thread", rc.Thread.Thread},
	} {
		if agentOnly && part.key != "agent" {
			continue
		}
		if strings.TrimSpace(part.text) == "" {
			add("thread.%s: required", part.key)
			continue
		}
		if _, err := parseThreadTemplate(part.key, part.text); err != nil {
			add("thread.%s: %w", part.key, err)
			continue
		}
		if part.key == "agent" && !strings.Contains(part.text, "{{") && !slices.Contains(agents, part.text) {
			add("thread.agent: unknown agent %q", part.text)
		}
	}
	for _, part := range []struct{ key, text string }{
		{"net_key", rc.NetKey}, {"state", rc.State}, {"rest_state", rc.RestState},
	} {
		if part.text == "" {
			continue
		}
		if _, err := parseThreadTemplate(part.key, part.text); err != nil {
			add("%s: %w", part.key, err)
		}
	}
	if rc.Priority != "" && !rc.Priority.Valid() {
		add("priority: unknown %q (want low, medium, high or urgent)", rc.Priority)
	}
	switch rc.DeliverAs {
	case inbox.DeliverAsNotification, inbox.DeliverAsMessage, inbox.DeliverAsQueued:
	default:
		add("deliver_as: unknown %q (want message or queued-message)", rc.DeliverAs)
	}
	return errors.Join(errs...)
}

// field is one route field, listed once for matching, validation and explain: its
// config key, the values a route's match lists for it (nil when routes cannot
// match on it) and the values an item has.
type field struct {
	key  string
	want func(*RouteMatch) inbox.StringList
	have func(*Fields) []string
}

func one(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// fields lists the route fields in config order. Extra is matched by name on top.
func fields() []field {
	return []field{
		{"source", func(m *RouteMatch) inbox.StringList { return m.Source }, func(f *Fields) []string { return one(f.Source) }},
		{"connector", func(m *RouteMatch) inbox.StringList { return m.Connector }, func(f *Fields) []string { return one(f.Connector) }},
		{"kind", func(m *RouteMatch) inbox.StringList { return m.Kind }, func(f *Fields) []string { return one(f.Kind) }},
		{"repo", func(m *RouteMatch) inbox.StringList { return m.Repo }, func(f *Fields) []string { return one(f.Repo) }},
		{"number", func(m *RouteMatch) inbox.StringList { return m.Number }, func(f *Fields) []string {
			if f.Number == 0 {
				return nil
			}
			return []string{strconv.Itoa(f.Number)}
		}},
		{"branch", func(m *RouteMatch) inbox.StringList { return m.Branch }, func(f *Fields) []string { return one(f.Branch) }},
		{"author", func(m *RouteMatch) inbox.StringList { return m.Author }, func(f *Fields) []string { return one(f.Author) }},
		{"labels", func(m *RouteMatch) inbox.StringList { return m.Labels }, func(f *Fields) []string { return f.Labels }},
		{"team", func(m *RouteMatch) inbox.StringList { return m.Team }, func(f *Fields) []string { return one(f.Team) }},
		{"channel", func(m *RouteMatch) inbox.StringList { return m.Channel }, func(f *Fields) []string { return one(f.Channel) }},
		{"channel_type", func(m *RouteMatch) inbox.StringList { return m.ChannelType }, func(f *Fields) []string { return one(f.ChannelType) }},
		{"user", func(m *RouteMatch) inbox.StringList { return m.User }, func(f *Fields) []string { return one(f.User) }},
		{"thread_ts", nil, func(f *Fields) []string { return one(f.ThreadTS) }}, // thread templates only
		{"mailbox", func(m *RouteMatch) inbox.StringList { return m.Mailbox }, func(f *Fields) []string { return one(f.Mailbox) }},
		{"from", func(m *RouteMatch) inbox.StringList { return m.From }, func(f *Fields) []string { return one(f.From) }},
		{"subject", func(m *RouteMatch) inbox.StringList { return m.Subject }, func(f *Fields) []string { return one(f.Subject) }},
	}
}

// lists names every list of the match for validation, Extra included.
func (m RouteMatch) lists() map[string]inbox.StringList {
	out := map[string]inbox.StringList{}
	for _, fl := range fields() {
		if fl.want != nil {
			out[fl.key] = fl.want(&m)
		}
	}
	for k, v := range m.Extra {
		out["extra."+k] = v
	}
	return out
}

// Values lists the item's route fields by config key (labels as a list, extra as a
// map): what explain shows a user writing a match.
func (f Fields) Values() map[string]any {
	out := map[string]any{}
	for _, fl := range fields() {
		switch v := fl.have(&f); {
		case len(v) == 0:
		case fl.key == "labels":
			out[fl.key] = v
		default:
			out[fl.key] = v[0]
		}
	}
	if len(f.Extra) > 0 {
		out["extra"] = f.Extra
	}
	return out
}
