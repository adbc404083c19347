package watch

import (
	"context"
	"fmt"
	"strings"

	"github.com/signalgate/signalgate/inbox"
)

// Resource is a watch resource as its source's kind reads it.
type Resource struct {
	// Canonical is the form watches are kept and items looked up in.
	Canonical string
	// Whole: the resource holds many things (a GitHub repository) rather than being one
	// with a terminal state, so an item's end never ends its watches. Whether a
	// connector may watch it is the kind's rule (Scope.Admit).
	Whole bool
}

// ResourceKind is a source a watch may name, and how its kind reads its resources.
type ResourceKind struct {
	Source string
	// Parse reads a resource of the source (trimmed, at most MaxResourceBytes of
	// printable text already) and answers its canonical form; its error says what the
	// source's resources look like.
	Parse func(resource string) (Resource, error)
}

// Resources are the sources a watch may name, in the kinds table's order (which builds
// them from the rows that have a watch resource parser). A source not among them
// cannot be watched.
type Resources []ResourceKind

// Sources are the sources, in order.
func (rs Resources) Sources() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Source
	}
	return out
}

// Known reports whether source can be watched.
func (rs Resources) Known(source string) bool {
	for _, r := range rs {
		if r.Source == source {
			return true
		}
	}
	return false
}

// Resource checks a requested resource of source and answers its canonical form, as
// the source's kind reads it. A source that cannot be watched, an empty, oversized or
// unprintable resource and one its kind refuses are ErrInvalid naming the field.
func (rs Resources) Resource(source, resource string) (Resource, error) {
	r := strings.TrimSpace(resource)
	if r == "" {
		return Resource{}, fmt.Errorf("%w: resource: required", ErrInvalid)
	}
	if len(r) > MaxResourceBytes {
		return Resource{}, fmt.Errorf("%w: resource: at most %d bytes", ErrInvalid, MaxResourceBytes)
	}
	if err := inbox.CheckText(r, MaxResourceBytes); err != nil || strings.ContainsAny(r, "\x1f\r\n\t") {
		return Resource{}, fmt.Errorf("%w: resource: must be printable text", ErrInvalid)
	}
	var parse func(string) (Resource, error)
	for _, k := range rs {
		if k.Source == source {
			parse = k.Parse
		}
	}
	if parse == nil {
		return Resource{}, fmt.Errorf("%w: source: %s", ErrInvalid, rs.want())
	}
	got, err := parse(r)
	if err != nil {
		return Resource{}, fmt.Errorf("%w: resource: %w", ErrInvalid, err)
	}
	return got, nil
}

// want says which sources a watch may name: "want github, slack, email or generic".
func (rs Resources) want() string {
	src := rs.Sources()
	switch len(src) {
	case 0:
		return "no source can be watched"
	case 1:
		return "want " + src[0]
	}
	return "want " + strings.Join(src[:len(src)-1], ", ") + " or " + src[len(src)-1]
}

// Admit is one kind's own rule of what its connectors may watch, beyond the agent's
// scope (a GitHub repository must be one the connector receives events for): an error
// wrapping ErrInvalid or ErrUnknown refuses r through connector.
type Admit func(ctx context.Context, connector string, r Resource) error
