package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/watch"
)

// validateWatchConnectors checks agents[].watch_connectors name configured connectors.
func (c *Config) validateWatchConnectors() error {
	var errs []error
	refs := c.connectorRefs()
	for i, a := range c.Agents {
		for j, ref := range a.WatchConnectors {
			source, name, ok := strings.Cut(ref, "/")
			if !ok || !slices.ContainsFunc(refs, func(r admin.ConnectorRef) bool { return r.Source == source && r.Name == name }) {
				errs = append(errs, fmt.Errorf("agents[%d].watch_connectors[%d]: %q is not a configured connector (want source/name, e.g. github/main)", i, j, ref))
			}
		}
	}
	return errors.Join(errs...)
}

// RepoSeer tells whether a GitHub connector has received a verified delivery for a
// repository (the store).
type RepoSeer interface {
	RepoSeen(ctx context.Context, connector, repo string) (bool, error)
}

// watchScope is what each agent may watch, from config: the connectors its routes feed
// it from (a route whose thread.agent is a template grants nothing: it could be any
// agent) plus agents[].watch_connectors.
type watchScope struct {
	allowed   map[string]map[string][]string // agent → source → connector names
	wholeRepo map[string]bool                // GitHub connectors with watch_repositories
	repos     RepoSeer
}

func (c *Config) watchScope(repos RepoSeer) *watchScope {
	s := &watchScope{allowed: map[string]map[string][]string{}, wholeRepo: map[string]bool{}, repos: repos}
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
	for _, g := range entries[github.Config](c.Connectors, github.Source) {
		s.wholeRepo[g.Name] = g.WatchRepositories
	}
	return s
}

// Connectors lists the connectors of source agent may watch.
func (s *watchScope) Connectors(agent, source string) []string {
	return slices.Clone(s.allowed[agent][source])
}

// WholeRepositories reports connectors.github[].watch_repositories of connector.
func (s *watchScope) WholeRepositories(connector string) bool { return s.wholeRepo[connector] }

// RepoSeen reports whether GitHub connector has received events for repo.
func (s *watchScope) RepoSeen(ctx context.Context, connector, repo string) (bool, error) {
	return s.repos.RepoSeen(ctx, connector, repo)
}

var _ watch.Scope = (*watchScope)(nil)
