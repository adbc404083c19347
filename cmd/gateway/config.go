package main

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/store"
)

// Config is config.yaml.
type Config struct {
	Server     server.Config            `yaml:"server"`
	Storage    store.Config             `yaml:"storage"`
	Log        LogConfig                `yaml:"log"`
	Admin      admin.Config             `yaml:"admin"`
	Console    console.Config           `yaml:"console"`
	Agents     []agent.Config           `yaml:"agents"`
	Connectors ConnectorsConfig         `yaml:"connectors"`
	Routes     []connectors.RouteConfig `yaml:"routes"`
	Policy     inbox.PolicyConfig       `yaml:"policy"`
	Retention  retention.Config         `yaml:"retention"`
	Dispatch   DispatchConfig           `yaml:"dispatch"`
	Approvals  approval.Config          `yaml:"approvals"`

	// router is Routes compiled by Validate; serving and explain use it as it is.
	router *connectors.Router
}

// ConnectorsConfig lists the configured connectors per source.
type ConnectorsConfig struct {
	GitHub  []github.Config  `yaml:"github"`
	Slack   []slack.Config   `yaml:"slack"`
	Email   []email.Config   `yaml:"email"`
	Generic []generic.Config `yaml:"generic"`
}

// LogConfig is the `log:` section.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // auto (text on a terminal, else JSON), json, text
}

// ConfigError lists every problem found in a config file, one per line.
type ConfigError struct {
	Path     string
	Problems []string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: invalid configuration:\n  %s", e.Path, strings.Join(e.Problems, "\n  "))
}

// LoadConfig reads, interpolates, strictly decodes, defaults and validates a config file.
func LoadConfig(path string, lookup func(string) (string, bool)) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(path, raw, lookup)
}

// ParseConfig is LoadConfig on bytes; path only names the source in errors.
func ParseConfig(path string, raw []byte, lookup func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, &ConfigError{Path: path, Problems: []string{"not valid YAML: " + err.Error()}}
	}
	// Every stage runs, so one pass reports every problem; a key already named by an
	// earlier stage (an unset variable, a bad value) is not reported again.
	var problems []string
	var cfg Config
	if len(root.Content) > 0 {
		doc := root.Content[0]
		problems = append(problems, interpolate(doc, "", lookup)...)
		problems = append(problems, unknownKeys(doc, reflect.TypeOf(Config{}), "")...)
		if err := doc.Decode(&cfg); err != nil {
			problems = append(problems, typeErrors(err, keyLines(doc, "", map[int]string{}))...)
		}
	}
	cfg.applyDefaults()
	named := map[string]bool{}
	for _, p := range problems {
		key, _, _ := strings.Cut(p, ": ")
		named[key] = true
	}
	for _, p := range cfg.Validate() {
		if key, _, _ := strings.Cut(p, ": "); !named[key] {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return nil, &ConfigError{Path: path, Problems: problems}
	}
	return &cfg, nil
}

func (c *Config) applyDefaults() {
	c.Server = c.Server.WithDefaults()
	c.Storage = c.Storage.WithDefaults()
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "auto"
	}
	for i := range c.Agents {
		c.Agents[i] = c.Agents[i].WithDefaults()
	}
	for i := range c.Connectors.GitHub {
		c.Connectors.GitHub[i] = c.Connectors.GitHub[i].WithDefaults()
	}
	for i := range c.Connectors.Email {
		c.Connectors.Email[i] = c.Connectors.Email[i].WithDefaults()
	}
	for i := range c.Connectors.Slack {
		c.Connectors.Slack[i] = c.Connectors.Slack[i].WithDefaults()
	}
	if c.Policy.SummaryInterval == 0 {
		c.Policy.SummaryInterval = inbox.DefaultSummaryInterval
	}
	c.Retention = c.Retention.WithDefaults()
	c.Console = c.Console.WithDefaults()
	c.Dispatch = c.Dispatch.WithDefaults()
	c.Approvals = c.Approvals.WithDefaults()
}

// Validate returns one line per problem, each starting with the key path.
func (c *Config) Validate() []string {
	var out []string
	add := func(prefix string, err error) {
		for _, e := range flatten(err) {
			out = append(out, prefix+e.Error())
		}
	}
	add("server.", c.Server.Validate())
	add("storage.", c.Storage.Validate())
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		out = append(out, fmt.Sprintf("log.level: unknown %q (want debug, info, warn or error)", c.Log.Level))
	}
	switch c.Log.Format {
	case "auto", "json", "text":
	default:
		out = append(out, fmt.Sprintf("log.format: unknown %q (want auto, json or text)", c.Log.Format))
	}
	add("admin.", c.Admin.Validate())
	add("console.", c.Console.Validate())
	ids := map[string]bool{}
	for i, a := range c.Agents {
		p := fmt.Sprintf("agents[%d].", i)
		add(p, a.Validate())
		if ids[a.ID] && a.ID != "" {
			out = append(out, fmt.Sprintf("%sid: duplicate agent %q", p, a.ID))
		}
		ids[a.ID] = true
	}
	add("connectors.", connectors.ValidateConfigs("github", c.Connectors.GitHub))
	add("connectors.", connectors.ValidateConfigs("slack", c.Connectors.Slack))
	add("connectors.", connectors.ValidateConfigs("email", c.Connectors.Email))
	add("connectors.", connectors.ValidateConfigs("generic", c.Connectors.Generic))
	c.router = nil
	if r, err := connectors.NewRouter(c.Routes, c.AgentIDs()); err != nil {
		add("", err)
	} else {
		c.router = r
	}
	add("policy.", c.Policy.Validate())
	add("retention.", c.Retention.Validate())
	add("dispatch.", c.Dispatch.Validate())
	add("approvals.", c.Approvals.Validate(c.approvalConnectors()))
	return append(out, c.credentialProblems()...)
}

// approvalConnectors lists the Slack connectors by name: true when one can post
// approvals (a bot token) and take clicks (a signing secret and the HTTP interactivity
// endpoint: a Socket Mode app gets its clicks over the socket, which handles none).
func (c *Config) approvalConnectors() map[string]bool {
	out := map[string]bool{}
	for _, s := range c.Connectors.Slack {
		out[s.Name] = s.BotToken != "" && s.SigningSecret != "" && !s.SocketMode
	}
	return out
}

// Secrets lists every configured secret, so stored delivery errors can be redacted.
func (c *Config) Secrets() []string {
	var out []string
	add := func(v ...string) {
		for _, s := range v {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	for _, t := range c.Admin.Tokens {
		add(t.Token)
	}
	add(c.Console.SessionKey)
	for _, a := range c.Agents {
		add(a.Token, a.Target.Secret)
		for _, h := range a.Target.Headers {
			add(h)
		}
	}
	for _, g := range c.Connectors.GitHub {
		add(g.Secret)
	}
	for _, s := range c.Connectors.Slack {
		add(s.SigningSecret, s.BotToken, s.AppToken)
	}
	for _, em := range c.Connectors.Email {
		add(em.Password)
	}
	for _, g := range c.Connectors.Generic {
		add(g.Secret)
	}
	return out
}

// Router is the routes as validation compiled them (compiled now for a Config built
// in code and never validated).
func (c *Config) Router() (*connectors.Router, error) {
	if c.router != nil {
		return c.router, nil
	}
	r, err := connectors.NewRouter(c.Routes, c.AgentIDs())
	if err != nil {
		return nil, err
	}
	c.router = r
	return r, nil
}

// AgentIDs lists the configured agents.
func (c *Config) AgentIDs() []string {
	ids := make([]string, 0, len(c.Agents))
	for _, a := range c.Agents {
		ids = append(ids, a.ID)
	}
	return ids
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// interpolate replaces ${VAR} and ${VAR:-default} in scalar values (never in keys or
// comments). A bare $ is left alone so secrets may contain it.
func interpolate(n *yaml.Node, path string, lookup func(string) (string, bool)) []string {
	var problems []string
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			problems = append(problems, interpolate(n.Content[i+1], join(path, n.Content[i].Value), lookup)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			problems = append(problems, interpolate(c, fmt.Sprintf("%s[%d]", path, i), lookup)...)
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return nil
		}
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if v, ok := lookup(m[1]); ok {
				return v
			}
			if m[2] != "" {
				return m[3]
			}
			problems = append(problems, fmt.Sprintf("%s: environment variable %s is not set", path, m[1]))
			return ""
		})
		// An interpolated value is always a string, even if it looks like a number.
		if n.Tag == "" || n.Tag == "!" {
			n.Tag = "!!str"
		}
	}
	return problems
}

var (
	yamlUnmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// unknownKeys walks the document against the Go types and names every key that
// would be ignored, by its full path.
func unknownKeys(n *yaml.Node, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(yamlUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	var problems []string
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			ft, ok := fields[key]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: unknown key (line %d)", join(path, key), n.Content[i].Line))
				continue
			}
			problems = append(problems, unknownKeys(n.Content[i+1], ft, join(path, key))...)
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			problems = append(problems, unknownKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			problems = append(problems, unknownKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))...)
		}
	}
	return problems
}

// yamlFields maps YAML keys to field types, following ",inline" embeddings.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

var lineRef = regexp.MustCompile(`^line (\d+): `)

// typeErrors rewrites yaml's "line N: cannot unmarshal…" into "key.path: cannot unmarshal…".
func typeErrors(err error, lines map[int]string) []string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []string{err.Error()}
	}
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := lineRef.FindStringSubmatch(e); m != nil {
			n, _ := strconv.Atoi(m[1])
			if p, ok := lines[n]; ok {
				e = p + ": " + strings.TrimPrefix(e, m[0]) + " (line " + m[1] + ")"
			}
		}
		out = append(out, e)
	}
	return out
}

// keyLines maps each line holding a value to that value's key path.
func keyLines(n *yaml.Node, path string, out map[int]string) map[int]string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			out[n.Content[i+1].Line] = p
			keyLines(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if _, ok := out[c.Line]; !ok {
				out[c.Line] = p
			}
			keyLines(c, p, out)
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
