package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
)

// targetKinds are the table this config was decoded with (the built-in one for a
// config built in code).
func (c *Config) targetKinds() []targetKind {
	if c.targets != nil {
		return c.targets
	}
	return builtinTargets()
}

// targetKindOf is the row of kind ("" is the default kind), or nil.
func targetKindOf(kinds []targetKind, kind string) targetKind {
	if kind == "" {
		kind = agent.TargetStream
	}
	for _, k := range kinds {
		if k.kind() == kind {
			return k
		}
	}
	return nil
}

// targetKindNames are the table's kinds, in order (the OpenAPI enum).
func (c *Config) targetKindNames() []string {
	var out []string
	for _, k := range c.targetKinds() {
		out = append(out, k.kind())
	}
	return out
}

// runtimeKindNames are the target kinds whose runtime reports its runs, in table order:
// those that may ask people through approvals (an approval's origin names one).
func (c *Config) runtimeKindNames() []string {
	var out []string
	for _, k := range c.targetKinds() {
		if k.presence() == agent.PresenceRuntime {
			out = append(out, k.kind())
		}
	}
	return out
}

// decodeTargets decodes each agent's kind settings from its target mapping in doc and
// sets its presence from the kind's row. An unknown kind is left for validation.
func (c *Config) decodeTargets(doc *yaml.Node, kinds []targetKind) error {
	c.targets = kinds
	nodes := targetNodes(doc)
	var errs []string
	for i := range c.Agents {
		t := &c.Agents[i].Target
		k := targetKindOf(kinds, t.Kind)
		if k == nil {
			continue
		}
		settings, err := k.decode(nodes[i])
		t.Settings, t.Presence = settings, k.presence()
		var te *yaml.TypeError
		switch {
		case errors.As(err, &te):
			errs = append(errs, te.Errors...)
		case err != nil:
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

// targetNodes are the agents[i].target mappings of doc, by agent index.
func targetNodes(doc *yaml.Node) map[int]*yaml.Node {
	out := map[int]*yaml.Node{}
	agents := mappingValue(doc, "agents")
	if agents == nil || agents.Kind != yaml.SequenceNode {
		return out
	}
	for i, a := range agents.Content {
		if t := mappingValue(a, "target"); t != nil && t.Kind == yaml.MappingNode {
			out[i] = t
		}
	}
	return out
}

// mappingValue is the value under key of mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// validateTarget is what a's target needs beyond agent.Config.Validate: a known kind, and
// reply: auto only for a kind that answers by itself. Keys are relative to the entry.
func (c *Config) validateTarget(a agent.Config) error {
	kinds := c.targetKinds()
	k := targetKindOf(kinds, a.Target.Kind)
	if k == nil {
		var names []string
		for _, k := range kinds {
			names = append(names, k.kind())
		}
		return fmt.Errorf("target.kind: unknown %q (want %s)", a.Target.Kind, orList(names))
	}
	if a.Target.Reply == agent.ReplyAuto && !k.autoReply() {
		var answering []string
		for _, k := range kinds {
			if k.autoReply() {
				answering = append(answering, k.kind())
			}
		}
		return fmt.Errorf("target.reply: only a %s target answers by itself (kind is %s); other agents post replies through the agent API", orList(answering), k.kind())
	}
	return nil
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// targetCredentials are the problems of the targets' credentials (a kind's
// CheckCredentials), by key.
func (c *Config) targetCredentials() []string {
	var out []string
	for i, a := range c.Agents {
		s, ok := a.Target.Settings.(interface{ CheckCredentials() error })
		if !ok {
			continue
		}
		for _, err := range flatten(s.CheckCredentials()) {
			out = append(out, fmt.Sprintf("agents[%d].target.%v", i, err))
		}
	}
	return out
}

// targetSections are the keys a target mapping takes, for the config walk: the common
// ones and its kind's (every kind's when the kind is unknown, or when all lists every
// key the config takes). unknown says why a key outside them is refused: a key of other
// kinds names them.
func targetSections(v reflect.Value, kinds []targetKind, all bool) (sections map[string]reflect.Value, unknown func(path string, line int) string) {
	sections = map[string]reflect.Value{}
	for key, index := range yamlFields(v.Type()) {
		sections[key] = field(v, index)
	}
	t, _ := v.Interface().(agent.TargetConfig)
	own := targetKindOf(kinds, t.Kind)
	add := func(s reflect.Value) {
		if s.Kind() != reflect.Struct {
			return
		}
		for key, index := range yamlFields(s.Type()) {
			if _, dup := sections[key]; !dup {
				sections[key] = field(s, index)
			}
		}
	}
	// The settings decoded, whatever table decoded them: their secrets are walked.
	if t.Settings != nil {
		add(reflect.ValueOf(t.Settings))
	}
	for _, k := range kinds {
		if all || own == nil || k.kind() == own.kind() {
			add(reflect.Zero(k.settings()))
		}
	}
	unknown = func(path string, line int) string {
		key := path[strings.LastIndex(path, ".")+1:]
		var takers []string
		for _, k := range kinds {
			if k.settings().Kind() != reflect.Struct {
				continue
			}
			if _, ok := yamlFields(k.settings())[key]; ok {
				takers = append(takers, k.kind())
			}
		}
		if len(takers) == 0 || own == nil {
			return fmt.Sprintf("%s: unknown key (line %d)", path, line)
		}
		article := "a"
		if strings.ContainsAny(takers[0][:1], "aeiou") {
			article = "an"
		}
		return fmt.Sprintf("%s: only %s %s target takes this key (kind is %s; line %d)", path, article, orList(takers), own.kind(), line)
	}
	return sections, unknown
}

// buildTargets builds every agent's route through its kind's row.
func (c *Config) buildTargets(b targetBuild) (builtTargets, error) {
	out := builtTargets{routes: map[string]delivery.Route{}, runtimes: agentRuns{}}
	kinds := c.targetKinds()
	for _, a := range c.Agents {
		a = a.WithDefaults()
		k := targetKindOf(kinds, a.Target.Kind)
		if k == nil {
			return builtTargets{}, fmt.Errorf("agent %q: unknown target kind %q", a.ID, a.Target.Kind)
		}
		r, svcs, err := k.build(a, b)
		if err != nil {
			return builtTargets{}, err
		}
		out.routes[a.ID] = r
		out.services = append(out.services, svcs...)
		for i, p := range append([]any{r.Target}, anys(svcs)...) {
			if m, ok := p.(mounter); ok && (i == 0 || p != r.Target) {
				out.mounts = append(out.mounts, m)
			}
			if rr, ok := p.(agent.RuntimeRuns); ok {
				out.runtimes[a.ID] = rr
			}
		}
	}
	return out, nil
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// targetChecks are check --connect's probes of the agents' targets, in config order.
func (c *Config) targetChecks(hc *http.Client) []connectCheck {
	var out []connectCheck
	kinds := c.targetKinds()
	for i, a := range c.Agents {
		a = a.WithDefaults()
		k := targetKindOf(kinds, a.Target.Kind)
		if k == nil {
			continue
		}
		if run := k.probe(a, fmt.Sprintf("agents[%d].target", i), hc); run != nil {
			out = append(out, connectCheck{"agent " + a.ID + " (" + k.kind() + ")", run})
		}
	}
	return out
}

// describeTarget is check's line for a's target: its kind and what its row shows.
func (c *Config) describeTarget(a agent.Config) string {
	if k := targetKindOf(c.targetKinds(), a.Target.Kind); k != nil {
		return k.describe(a)
	}
	return a.Target.Kind
}

// recoveryRules are each kind's rule for a crashed run's in-flight signals (the store's).
func (c *Config) recoveryRules() map[string]delivery.RecoveryRule {
	out := map[string]delivery.RecoveryRule{}
	for _, k := range c.targetKinds() {
		out[k.kind()] = k.recovery()
	}
	return out
}
