package connectors

import (
	"cmp"
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
	"github.com/signalgate/signalgate/watch"
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

// Router turns items into notifications by the configured routes.
type Router struct {
	routes  []compiledRoute
	agents  []string
	fields  []field
	limits  condition.Limits // what one event's `when`s may spend
	sources []string         // the sources match.source may name
	// defaultThreads are the sources whose items have a default thread, for routes
	// naming only their agent (nil: not said, any source)
	defaultThreads []string
	// resources read the sources' watch resources (WithWatchResources)
	resources watch.Resources
}

// RouterOption configures a Router.
type RouterOption func(*Router)

// WithExpressionLimits sets what the routes' `when`s may spend on one event
// (condition.DefaultLimits otherwise).
func WithExpressionLimits(l condition.Limits) RouterOption {
	return func(r *Router) { r.limits = l }
}

// WithSources sets the sources a route's match.source may name: the configured
// integration kinds' (any source otherwise).
func WithSources(sources ...string) RouterOption {
	return func(r *Router) { r.sources = sources }
}

// WithDefaultThreads sets the sources whose items have a default thread
// (Item.DefaultResource, DefaultThread): a route naming only its agent must match
// only them.
func WithDefaultThreads(sources ...string) RouterOption {
	return func(r *Router) { r.defaultThreads = append([]string{}, sources...) }
}

type compiledRoute struct {
	cfg                     RouteConfig
	agent, resource, thread *template.Template
	when                    *condition.Condition
	// net_key, state and rest_state templates; nil when not set
	netKey, state, restState *template.Template
}

// NewRouter validates and compiles routes. Errors name the entry: routes[2].thread.agent.
func NewRouter(routes []RouteConfig, agents []string, opts ...RouterOption) (*Router, error) {
	var errs []error
	seen := map[string]int{}
	r := &Router{agents: slices.Clone(agents), fields: fields(), limits: condition.DefaultLimits()}
	for _, o := range opts {
		o(r)
	}
	for i, rc := range routes {
		if err := rc.validate(agents, r.sources, r.defaultThreads); err != nil {
			errs = append(errs, PrefixErrors(fmt.Sprintf("routes[%d].", i), err))
			continue
		}
		if j, dup := seen[rc.Name]; dup {
			errs = append(errs, fmt.Errorf("routes[%d].name: duplicate route name %q (also routes[%d])", i, rc.Name, j))
			continue
		}
		seen[rc.Name] = i
		cr := compiledRoute{cfg: rc}
		// Validate parsed these already; parsing again cannot fail.
		cr.agent, _ = parseThreadTemplate("agent", rc.Thread.Agent)
		if !rc.Thread.agentOnly() {
			cr.resource, _ = parseThreadTemplate("resource", rc.Thread.Resource)
			cr.thread, _ = parseThreadTemplate("thread", rc.Thread.Thread)
		}
		if rc.Match.When != "" {
			cr.when, _ = condition.Compile(rc.Match.When, condition.RouteEnv{})
		}
		for _, t := range []struct {
			dst        **template.Template
			name, text string
		}{{&cr.netKey, "net_key", rc.NetKey}, {&cr.state, "state", rc.State}, {&cr.restState, "rest_state", rc.RestState}} {
			if t.text != "" {
				*t.dst, _ = parseThreadTemplate(t.name, t.text)
			}
		}
		r.routes = append(r.routes, cr)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// PrefixErrors puts a key path prefix ("routes[2].", "github[0].") before every
// error joined in err, so validation messages name the full config key.
func PrefixErrors(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, fmt.Errorf("%s%w", prefix, e))
		}
		return errors.Join(out...)
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// Route returns one notification per matching route and distinct thread for every
// item not marked Skip. A route whose thread renders empty (or names an unknown
// agent) is skipped for that item and reported in errs.
func (r *Router) Route(items []Item) (ns []inbox.Notification, errs []error) {
	return r.RouteEvent(nil, items)
}

// Len is the number of configured routes.
func (r *Router) Len() int { return len(r.routes) }

// UsesPayload reports whether a route has a `when`, so callers decode the event
// body for it only then.
func (r *Router) UsesPayload() bool {
	return slices.ContainsFunc(r.routes, func(rt compiledRoute) bool { return rt.when != nil })
}

// RouteEvent is Route with the event's decoded body (condition.DecodePayload) as
// `payload` for routes' `when`. A `when` stopped on the event's expression budget is
// a non-match reported in errs (wrapping condition.ErrBudgetExceeded).
func (r *Router) RouteEvent(payload any, items []Item) (ns []inbox.Notification, errs []error) {
	rt := r.RouteTraced(payload, items)
	return rt.Notifications, rt.Errs
}

// Routing is one event's routing, with the trace of every route against each item.
type Routing struct {
	Notifications []inbox.Notification
	Errs          []error
	Traces        [][]Trace // per item; nil for a skipped item
}

// RouteTraced is RouteEvent with the traces explain shows. Every `when` of the event
// draws on one budget. Without watches (RouteWatched has them) a `watched: true` route
// keeps no thread.
func (r *Router) RouteTraced(payload any, items []Item) Routing {
	return r.routeTraced(payload, items, make([]itemWatches, len(items)))
}

func (r *Router) routeTraced(payload any, items []Item, ws []itemWatches) Routing {
	out := Routing{Traces: make([][]Trace, len(items))}
	b := condition.NewBudget(r.limits)
	for j, it := range items {
		if it.Skip != "" {
			continue
		}
		out.Traces[j] = r.traceEvent(payload, it, ws[j].hear, b)
		for i, tr := range out.Traces[j] {
			switch {
			case tr.Err != nil:
				out.Errs = append(out.Errs, fmt.Errorf("route %q: %w", tr.Route, tr.Err))
			case errors.Is(tr.WhenErr, condition.ErrBudgetExceeded):
				out.Errs = append(out.Errs, fmt.Errorf("route %q: %w", tr.Route, tr.WhenErr))
			case tr.Matched && tr.SameThreadAs == "":
				out.Notifications = append(out.Notifications, r.routes[i].notification(&it, *tr.Thread))
			}
		}
	}
	return out
}

// Trace is one route against one item.
type Trace struct {
	Route   string
	Matched bool
	Thread  *inbox.ThreadKey // when matched and rendered
	Err     error            // matched, but the thread did not render
	// When is the route's expression, and WhenErr why it could not be evaluated
	// (a non-match), for explain.
	When    string
	WhenErr error
	// SameThreadAs names an earlier route that already feeds this thread: one
	// notification per item and thread.
	SameThreadAs string
	// Watch is the id of the watch that matched (route watch.Route) or that admitted
	// a `watched: true` route's thread.
	Watch string
	// Unwatched: a `watched: true` route rendered Thread, which no live watch of the
	// item has (a non-match).
	Unwatched bool
}

// traceEvent runs every route against it, in config order, drawing on the event's budget
// b: what routing does, and why a route did not match or make a notification (explain
// shows it). watching are the watches the item reaches, for `watched: true` routes.
func (r *Router) traceEvent(payload any, it Item, watching []watch.Watch, b *condition.Budget) []Trace {
	f := it.Fields
	if f.Kind == "" {
		f.Kind = it.Kind
	}
	out := make([]Trace, len(r.routes))
	claimed := map[inbox.ThreadKey]string{}
	for i, rt := range r.routes {
		tr := Trace{Route: rt.cfg.Name}
		matched := rt.cfg.Match.matches(r.fields, &f)
		if matched && rt.when != nil {
			tr.When = rt.when.String()
			matched, tr.WhenErr = rt.when.Match(rt.env(payload, &it, &f), b)
		}
		if matched {
			tr.Matched = true
			key, err := rt.threadKey(&it, &f, r.agents)
			var w watch.Watch
			if err == nil && rt.cfg.Watched {
				var ok bool
				if w, ok = watchOf(watching, key); !ok {
					tr.Matched, tr.Thread, tr.Unwatched = false, &key, true
					out[i] = tr
					continue
				}
				tr.Watch = w.ID
			}
			switch first, dup := claimed[key]; {
			case err != nil:
				tr.Err = err
			case dup:
				tr.Thread, tr.SameThreadAs = &key, first
			default:
				tr.Thread = &key
				claimed[key] = rt.cfg.Name
			}
		}
		out[i] = tr
	}
	return out
}

func (rt *compiledRoute) env(payload any, it *Item, f *Fields) *condition.RouteEnv {
	attrs := make(map[string]any, len(it.Attributes))
	for _, kv := range it.Attributes {
		attrs[kv.Key] = kv.Value
	}
	return &condition.RouteEnv{
		Record: condition.Record{Source: f.Source, Kind: f.Kind, Priority: string(cmp.Or(rt.cfg.Priority, it.Priority, inbox.PriorityMedium)),
			Route: rt.cfg.Name, Attributes: attrs, Metadata: it.Metadata, Payload: payload},
		Fields: f.Values(),
	}
}

func (rt *compiledRoute) threadKey(it *Item, f *Fields, agents []string) (inbox.ThreadKey, error) {
	var parts [3]string
	for i, t := range []*template.Template{rt.agent, rt.resource, rt.thread} {
		var b strings.Builder
		if t == nil {
			// A route naming only its agent: the kind's default thread of the item.
			if it.DefaultResource == "" || it.DefaultThread == "" {
				return inbox.ThreadKey{}, fmt.Errorf("thread.resource, thread.thread: not set, and a %s item has no default thread", cmp.Or(f.Source, "this"))
			}
			b.WriteString([]string{"", it.DefaultResource, it.DefaultThread}[i])
		} else if err := t.Execute(&b, f); err != nil {
			return inbox.ThreadKey{}, fmt.Errorf("render thread.%s: %w", t.Name(), err)
		}
		// What is routed must be readable: the agent API refuses control characters and
		// invalid UTF-8 in ids (inbox.CheckID); an id too long for it makes the event
		// invalid when stored, naming the route.
		parts[i] = inbox.CleanID(b.String())
		if parts[i] == "" {
			return inbox.ThreadKey{}, fmt.Errorf("thread.%s rendered empty", [...]string{"agent", "resource", "thread"}[i])
		}
	}
	if !slices.Contains(agents, parts[0]) {
		return inbox.ThreadKey{}, fmt.Errorf("thread.agent rendered unknown agent %q", parts[0])
	}
	return inbox.ThreadKey{Agent: parts[0], Resource: parts[1], Thread: parts[2]}, nil
}

func (rt *compiledRoute) notification(it *Item, key inbox.ThreadKey) inbox.Notification {
	n := inbox.Notification{
		Thread:      key,
		Route:       rt.cfg.Name,
		Source:      it.Fields.Source,
		Kind:        it.Kind,
		Priority:    it.Priority,
		Summary:     it.Summary,
		Payload:     it.Payload,
		DedupeKey:   it.DedupeKey,
		CoalesceKey: it.CoalesceKey,
		SourceID:    inbox.FitSourceID(it.SourceID),
		Attributes:  it.Attributes.Clone(),
		Metadata:    maps.Clone(it.Metadata),
		NetKey:      it.NetKey,
		State:       it.State,
		RestState:   it.RestState,
	}
	for _, t := range []struct {
		tmpl *template.Template
		dst  *string
	}{{rt.netKey, &n.NetKey}, {rt.state, &n.State}, {rt.restState, &n.RestState}} {
		if t.tmpl != nil {
			*t.dst = render(t.tmpl, &it.Fields)
		}
	}
	if n.NetKey == "" {
		n.State, n.RestState = "", "" // a state belongs to a lane
	}
	if rt.cfg.Priority != "" {
		n.Priority = rt.cfg.Priority
	}
	if rt.cfg.DeliverAs != "" {
		n.DeliverAs = rt.cfg.DeliverAs
		name, from, text := it.Fields.Author, it.Fields.Source, ""
		if m := it.Message; m != nil {
			name, from, text = cmp.Or(m.Name, name), cmp.Or(m.From, from), m.Text
		}
		n.Summary = cmp.Or(text, it.Summary)
		n.Attributes = inbox.Attributes{}.Set("name", name).Set("from", from).Merge(withoutKeys(it.Attributes, "name", "from"))
	}
	if len(rt.cfg.Attributes) > 0 {
		n.Attributes = n.Attributes.Merge(inbox.Attributes(rt.cfg.Attributes))
	}
	return n
}

func withoutKeys(a inbox.Attributes, keys ...string) inbox.Attributes {
	out := inbox.Attributes{}
	for _, kv := range a {
		if !slices.Contains(keys, kv.Key) {
			out = append(out, kv)
		}
	}
	return out
}

func (m *RouteMatch) matches(fields []field, f *Fields) bool {
	for _, fl := range fields {
		if fl.want == nil {
			continue
		}
		if want := fl.want(m); len(want) > 0 && !slices.ContainsFunc(fl.have(f), func(h string) bool { return anyMatch(want, h) }) {
			return false
		}
	}
	for k, want := range m.Extra {
		if len(want) > 0 && !anyMatch(want, f.Extra[k]) {
			return false
		}
	}
	return true
}

// Admits reports whether the match's source and connector keys let events of the
// connector source/name through (its other keys are not looked at): false means no
// event of that connector can ever match.
func (m RouteMatch) Admits(source, name string) bool {
	return (len(m.Source) == 0 || anyMatch(m.Source, source)) && (len(m.Connector) == 0 || anyMatch(m.Connector, name))
}

func anyMatch(want inbox.StringList, have string) bool {
	if have == "" {
		return false
	}
	h := strings.ToLower(have)
	for _, w := range want {
		w = strings.ToLower(w)
		if w == h {
			return true
		}
		if isPattern(w) {
			if ok, _ := path.Match(w, h); ok {
				return true
			}
		}
	}
	return false
}

func isPattern(s string) bool { return strings.ContainsAny(s, "*?[") }

// render executes a route's net-state template; a template that fails to render leaves
// the value out, as an empty render does.
func render(t *template.Template, f *Fields) string {
	var b strings.Builder
	if err := t.Execute(&b, f); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}
