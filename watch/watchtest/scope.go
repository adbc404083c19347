package watchtest

import (
	"context"
	"slices"
)

// Scope is a watch.Scope from fixed tables, for tests of the watch fronts.
type Scope struct {
	// Allowed are the connectors an agent may watch through, by "agent/source";
	// "*/source" applies to every agent.
	Allowed map[string][]string
	// Whole are the GitHub connectors that allow whole-repository watches.
	Whole []string
	// Seen are the repositories each GitHub connector has received events for.
	Seen map[string][]string
}

func (s Scope) Connectors(agent, source string) []string {
	if c, ok := s.Allowed[agent+"/"+source]; ok {
		return c
	}
	return s.Allowed["*/"+source]
}

func (s Scope) WholeRepositories(connector string) bool { return slices.Contains(s.Whole, connector) }

func (s Scope) RepoSeen(_ context.Context, connector, repo string) (bool, error) {
	return slices.Contains(s.Seen[connector], repo), nil
}
