package gateway

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
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/quiet"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/secret"
	"github.com/signalgate/signalgate/server"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/telemetry"
	"github.com/signalgate/signalgate/watch"
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
	Replies    RepliesConfig            `yaml:"replies"`
	Watches    watch.Config             `yaml:"watches"`
	Schedules  []schedule.Spec          `yaml:"schedules"`
	Silences   silence.Config           `yaml:"silences"`
	Telemetry  telemetry.Config         `yaml:"telemetry"`

	// TimeIntervals are the named intervals policy rules apply or mute in (quiet hours).
	TimeIntervals []quiet.Interval `yaml:"time_intervals"`

	// router is Routes compiled by Validate; serving and explain use it as it is.
	router *connectors.Router
	// targets is the table of target kinds the agents' targets were decoded with.
	targets []targetKind
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
	return parseConfig(path, raw, lookup, builtinKinds())
}

// parseConfig is ParseConfig with the integration kinds the connectors section holds.
func parseConfig(path string, raw []byte, lookup func(string) (string, bool), kinds []integration) (*Config, error) {
	return parseConfigOf(path, raw, lookup, kinds, builtinTargets())
}

// parseConfigOf is parseConfig with the target kinds agents' targets may be.
func parseConfigOf(path string, raw []byte, lookup func(string) (string, bool), kinds []integration, targets []targetKind) (*Config, error) {
	if err := checkKinds(kinds); err != nil {
		return nil, fmt.Errorf("the table of integration kinds: %w", err)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, &ConfigError{Path: path, Problems: []string{"not valid YAML: " + err.Error()}}
	}
	// Every stage runs, so one pass reports every problem; a key already named by an
	// earlier stage (an unset variable, a bad value) is not reported again.
	var problems []string
	cfg := Config{targets: targets}
	if len(root.Content) > 0 {
		doc := root.Content[0]
		problems = append(problems, interpolate(doc, "", lookup)...)
		decodeErr := doc.Decode(&cfg)
		kindsErr := cfg.Connectors.decodeKinds(kinds)
		targetsErr := cfg.decodeTargets(doc, targets)
		problems = append(problems, unknownKeys(doc, &cfg)...)
		for _, err := range []error{decodeErr, kindsErr, targetsErr} {
			if err != nil {
				problems = append(problems, typeErrors(err, keyLines(doc, "", map[int]string{}))...)
			}
		}
	} else if err := cfg.Connectors.decodeKinds(kinds); err != nil {
		problems = append(problems, err.Error())
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
	if c.Policy.SummaryInterval == 0 {
		c.Policy.SummaryInterval = inbox.DefaultSummaryInterval
	}
	c.Retention = c.Retention.WithDefaults()
	c.Console = c.Console.WithDefaults()
	c.Dispatch = c.Dispatch.WithDefaults()
	c.Approvals = c.Approvals.WithDefaults()
	c.Watches = c.Watches.WithDefaults()
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
		add(p, c.validateTarget(a))
		if ids[a.ID] && a.ID != "" {
			out = append(out, fmt.Sprintf("%sid: duplicate agent %q", p, a.ID))
		}
		ids[a.ID] = true
	}
	add("connectors.", c.validateKinds())
	c.router = nil
	if r, err := c.newRouter(); err != nil {
		add("", err)
	} else {
		c.router = r
	}
	add("policy.", c.Policy.Validate())
	// An unusable set would make every name the rules give look unknown: say only that.
	if set, err := quiet.NewSet(c.TimeIntervals); err != nil {
		add("time_intervals", err)
	} else {
		add("policy.", c.Policy.CheckTimeIntervals(set))
	}
	add("retention.", c.Retention.Validate())
	add("dispatch.", c.Dispatch.Validate())
	add("approvals.", c.Approvals.Validate(c.approvalConnectors()))
	add("replies.", c.Replies.validate())
	add("watches.", c.Watches.Validate())
	add("silences.", c.Silences.Validate())
	add("telemetry.", c.Telemetry.Validate())
	add("", c.validateWatchScope())
	add("", c.validateSchedules())
	add("", c.replyApprovals())
	out = append(out, c.credentialProblems()...)
	return append(out, c.targetCredentials()...)
}

// RepliesConfig is the `replies:` section: the reply outbox.
type RepliesConfig struct {
	// MaxAge: a reply not sent this long after it was queued fails (default 24h).
	MaxAge time.Duration `yaml:"max_age"`
	// Lease: how long a claimed reply stays with the replica sending it; after a crash
	// another replica takes it over once it lapses (default 2m); on SQLite the restarted
	// process takes it back at start.
	Lease time.Duration `yaml:"lease"`
	// PollInterval bounds how long replies queued on other replicas, or behind a lapsed
	// lease, wait to be claimed (default 30s).
	PollInterval time.Duration `yaml:"poll_interval"`
}

func (r RepliesConfig) validate() error {
	var errs []error
	if r.MaxAge < 0 {
		errs = append(errs, errors.New("max_age: must not be negative"))
	}
	if r.Lease != 0 && r.Lease < 2*time.Second {
		errs = append(errs, fmt.Errorf("lease: want at least 2s (a send gets half of it), got %s", r.Lease))
	}
	if r.PollInterval < 0 {
		errs = append(errs, errors.New("poll_interval: must not be negative"))
	}
	return errors.Join(errs...)
}

// replyApprovals refuses replies held for approvers when approvals are off: they would
// wait forever.
func (c *Config) replyApprovals() error {
	var errs []error
	for i, a := range c.Agents {
		if a.Replies.ApprovalRequired() && !c.Approvals.Enabled() {
			errs = append(errs, fmt.Errorf("agents[%d].replies.approval: required needs approvals.slack_connector", i))
		}
	}
	return errors.Join(errs...)
}

// approvalConnectors lists the Slack connectors by name: true when one can post
// approvals (a bot token) and take clicks (a signing secret and the HTTP interactivity
// endpoint: a Socket Mode app gets its clicks over the socket, which handles none).
func (c *Config) approvalConnectors() map[string]bool {
	out := map[string]bool{}
	for _, s := range entries[slack.Config](c.Connectors, slack.Source) {
		out[s.Name] = s.BotToken != "" && len(s.VerifySecrets()) > 0 && !s.SocketMode
	}
	return out
}

// Secrets lists every configured secret (every secret.Secret the config walk reaches),
// so stored delivery errors and check's lines can be redacted.
func (c *Config) Secrets() []string {
	w := configWalk{targets: c.targetKinds()}
	w.walk(reflect.ValueOf(c).Elem(), nil, "")
	return w.secrets
}

// Router is the routes as validation compiled them (compiled now for a Config built
// in code and never validated).
func (c *Config) Router() (*connectors.Router, error) {
	if c.router != nil {
		return c.router, nil
	}
	r, err := c.newRouter()
	if err != nil {
		return nil, err
	}
	c.router = r
	return r, nil
}

// newRouter compiles the routes against the agents and the kinds' sources.
func (c *Config) newRouter() (*connectors.Router, error) {
	return connectors.NewRouter(c.Routes, c.AgentIDs(), connectors.WithSources(c.sources()...),
		connectors.WithWatchResources(c.watchResources()))
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
	// The yaml v2 form, which v3 still calls: Alertmanager's time interval types use it.
	obsoleteUnmarshaler = reflect.TypeOf((*interface{ UnmarshalYAML(func(any) error) error })(nil)).Elem()
	secretType          = reflect.TypeOf(secret.Secret(""))
	targetConfigType    = reflect.TypeOf(agent.TargetConfig{})
)

// decodesItself: values of t decode themselves from YAML, so their keys are theirs to
// check and the walk treats them as one value.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(yamlUnmarshaler) || pt.Implements(textUnmarshaler) || pt.Implements(obsoleteUnmarshaler)
}

// unknownKeys names every key of the document that would be ignored, by its full path.
func unknownKeys(doc *yaml.Node, cfg *Config) []string {
	w := configWalk{targets: cfg.targetKinds()}
	w.walk(reflect.ValueOf(cfg).Elem(), doc, "")
	return w.unknown
}

// keyed is a config section whose keys are known at run time: the connectors
// section, keyed by the integration kinds.
type keyed interface {
	sections() map[string]reflect.Value
}

// configWalk walks a config value by its YAML keys. Given the document, it follows
// the document and names every key no field takes; without it, it visits every field.
// Either way it collects every non-empty secret.Secret it reaches: credentials are
// found by their type, so none is left out of redaction.
type configWalk struct {
	unknown []string
	secrets []string
	// listKeys makes a walk without a document visit every key the config takes, not
	// just the set ones, and name each leaf in keys: entries of a list or map of
	// sections as "[]" and ".*" (a list or map of values is one leaf). The reference,
	// docs/configuration.md, is checked against it.
	listKeys bool
	keys     []string
	// targets are the target kinds whose keys a target mapping takes (nil: the
	// built-in table).
	targets []targetKind
}

func (w *configWalk) walk(v reflect.Value, n *yaml.Node, path string) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v = reflect.Zero(v.Type().Elem())
			continue
		}
		v = v.Elem()
	}
	t := v.Type()
	if t == secretType {
		if v.String() != "" {
			w.secrets = append(w.secrets, v.String())
		}
		w.leaf(path)
		return
	}
	if k, ok := v.Interface().(keyed); ok {
		w.walkKeyed(k.sections(), n, path)
		return
	}
	if t == targetConfigType {
		w.walkTarget(v, n, path)
		return
	}
	if decodesItself(t) {
		w.leaf(path)
		return
	}
	switch t.Kind() {
	default:
		w.leaf(path)
	case reflect.Struct:
		fields := yamlFields(t)
		sections := make(map[string]reflect.Value, len(fields))
		for key, index := range fields {
			sections[key] = field(v, index)
		}
		w.walkKeyed(sections, n, path)
	case reflect.Slice, reflect.Array:
		if n == nil && w.listKeys {
			if e := t.Elem(); (e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer) && !decodesItself(e) {
				w.walk(reflect.Zero(e), nil, path+"[]")
			} else {
				w.leaf(path)
			}
			return
		}
		if n == nil {
			for i := range v.Len() {
				w.walk(v.Index(i), nil, fmt.Sprintf("%s[%d]", path, i))
			}
			return
		}
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			e := reflect.Zero(t.Elem())
			if i < v.Len() {
				e = v.Index(i)
			}
			w.walk(e, c, fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if n == nil && w.listKeys {
			if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer {
				w.walk(reflect.Zero(e), nil, join(path, "*"))
			} else {
				w.leaf(path)
			}
			return
		}
		if n == nil {
			for it := v.MapRange(); it.Next(); {
				w.walk(it.Value(), nil, join(path, fmt.Sprint(it.Key().Interface())))
			}
			return
		}
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(reflect.Zero(t.Elem()), n.Content[i+1], join(path, n.Content[i].Value))
		}
	}
}

// leaf names a key that holds a value, when the walk lists keys.
func (w *configWalk) leaf(path string) {
	if w.listKeys {
		w.keys = append(w.keys, path)
	}
}

// walkTarget walks agents[].target: the common keys and its kind's (the target table's).
func (w *configWalk) walkTarget(v reflect.Value, n *yaml.Node, path string) {
	kinds := w.targets
	if kinds == nil {
		kinds = builtinTargets()
	}
	sections, unknown := targetSections(v, kinds, n == nil && w.listKeys)
	if n == nil || n.Kind != yaml.MappingNode {
		w.walkKeyed(sections, n, path)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if fv, ok := sections[key]; ok {
			w.walk(fv, n.Content[i+1], join(path, key))
		} else {
			w.unknown = append(w.unknown, unknown(join(path, key), n.Content[i].Line))
		}
	}
}

// walkKeyed walks a mapping whose keys are known up front (a struct's YAML keys, the
// integration kinds' sections); a key outside them is unknown.
func (w *configWalk) walkKeyed(sections map[string]reflect.Value, n *yaml.Node, path string) {
	if n == nil {
		for key, v := range sections {
			w.walk(v, nil, join(path, key))
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		v, ok := sections[key]
		if !ok {
			w.unknown = append(w.unknown, fmt.Sprintf("%s: unknown key (line %d)", join(path, key), n.Content[i].Line))
			continue
		}
		w.walk(v, n.Content[i+1], join(path, key))
	}
}

// field is v's field at index, or the field type's zero value behind a nil embedded pointer.
func field(v reflect.Value, index []int) reflect.Value {
	f, err := v.FieldByIndexErr(index)
	if err != nil {
		return reflect.Zero(v.Type().FieldByIndex(index).Type)
	}
	return f
}

// yamlFields maps YAML keys to field indexes, following ",inline" embeddings.
func yamlFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = append([]int{i}, v...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = []int{i}
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
