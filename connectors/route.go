package connectors

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"text/template"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/watch"
)

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
