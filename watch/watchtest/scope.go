package watchtest

import (
	"context"

	"github.com/signalgate/signalgate/watch"
)

// Scope is a watch.Scope from fixed tables, for tests of the watch fronts.
type Scope struct {
	// Allowed are the connectors an agent may watch through, by "agent/source";
	// "*/source" applies to every agent.
	Allowed map[string][]string
	// Admits are kinds' own rules of what their connectors may watch, by source (none:
	// the kind has no rule).
	Admits map[string]watch.Admit
}

func (s Scope) Connectors(agent, source string) []string {
	if c, ok := s.Allowed[agent+"/"+source]; ok {
		return c
	}
	return s.Allowed["*/"+source]
}

func (s Scope) Admit(ctx context.Context, source, connector string, r watch.Resource) error {
	if a := s.Admits[source]; a != nil {
		return a(ctx, connector, r)
	}
	return nil
}
