package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/watch"
)

// validateWatchScope checks agents[].watch_connectors name configured connectors of
// kinds that can be watched, and a `watched: true` route's match.source only such
// kinds: a source no kind reads watch resources of would never be watched.
func (c *Config) validateWatchScope() error {
	var errs []error
	refs := c.connectorRefs()
	res := c.watchResources()
	cannot := func(source string) string {
		return fmt.Sprintf("source %q cannot be watched (%s)", source, strings.Join(res.Sources(), ", "))
	}
	for i, a := range c.Agents {
		for j, ref := range a.WatchConnectors {
			source, name, ok := strings.Cut(ref, "/")
			switch {
			case !ok || !slices.ContainsFunc(refs, func(r admin.ConnectorRef) bool { return r.Source == source && r.Name == name }):
				errs = append(errs, fmt.Errorf("agents[%d].watch_connectors[%d]: %q is not a configured connector (want source/name, e.g. github/main)", i, j, ref))
			case !res.Known(source):
				errs = append(errs, fmt.Errorf("agents[%d].watch_connectors[%d]: %s", i, j, cannot(source)))
			}
		}
	}
	for i, rt := range c.Routes {
		if !rt.Watched {
			continue
		}
		for j, source := range rt.Match.Source {
			if slices.Contains(c.sources(), source) && !res.Known(source) {
				errs = append(errs, fmt.Errorf("routes[%d].match.source[%d]: %s, so watched: true never matches", i, j, cannot(source)))
			}
		}
	}
	return errors.Join(errs...)
}

// watchScope is what each agent may watch, from config: the connectors its routes feed
// it from (a route whose thread.agent is a template grants nothing: it could be any
// agent) plus agents[].watch_connectors, each kind's rule applied.
type watchScope struct {
	allowed map[string]map[string][]string // agent → source → connector names
	admits  map[string]watch.Admit         // by source: the kinds' rules
}

// watchScope is the scope of c's agents; b has what the kinds' rules read (the store).
func (c *Config) watchScope(b build) *watchScope {
	s := &watchScope{allowed: map[string]map[string][]string{}, admits: c.watchAdmits(b)}
	grant := func(agent, source, name string) {
		if s.allowed[agent] == nil {
			s.allowed[agent] = map[string][]string{}
		}
		if !slices.Contains(s.allowed[agent][source], name) {
			s.allowed[agent][source] = append(s.allowed[agent][source], name)
		}
	}
	refs := c.connectorRefs()
	for _, rt := range c.Routes {
		agent := strings.TrimSpace(rt.Thread.Agent)
		if strings.Contains(agent, "{{") {
			continue
		}
		for _, ref := range refs {
			if rt.Match.Admits(ref.Source, ref.Name) {
				grant(agent, ref.Source, ref.Name)
			}
		}
	}
	for _, a := range c.Agents {
		for _, ref := range a.WatchConnectors {
			source, name, _ := strings.Cut(ref, "/")
			grant(a.ID, source, name)
		}
	}
	return s
}

// Connectors lists the connectors of source agent may watch.
func (s *watchScope) Connectors(agent, source string) []string {
	return slices.Clone(s.allowed[agent][source])
}

// Admit applies the rule of source's kind, if it has one.
func (s *watchScope) Admit(ctx context.Context, source, connector string, r watch.Resource) error {
	if a := s.admits[source]; a != nil {
		return a(ctx, connector, r)
	}
	return nil
}

var _ watch.Scope = (*watchScope)(nil)
