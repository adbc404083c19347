package generic

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// compiledMapping is a Mapping with its paths parsed once.
type compiledMapping struct {
	kind, kindSuffix, summary, priority, dedupe, coalesce, sourceID, payload, author, url, repo, number, branch Path
	priorities                                                                                                  map[string]inbox.Priority
	attributes, fields                                                                                          []namedPath
	kindPath                                                                                                    string // as configured, for errors
}

type namedPath struct {
	name string
	path Path
}

// compileMapping parses paths validated by Config.Validate; unset ones stay nil.
func compileMapping(m *Mapping) *compiledMapping {
	p := func(s string) Path {
		if s == "" {
			return nil
		}
		path, _ := ParsePath(s)
		return path
	}
	named := func(ps map[string]string) []namedPath {
		var out []namedPath
		for _, k := range sortedKeys(ps) {
			out = append(out, namedPath{name: k, path: p(ps[k])})
		}
		return out
	}
	return &compiledMapping{
		kind: p(m.Kind), kindSuffix: p(m.KindSuffix), summary: p(m.Summary), priority: p(m.Priority), dedupe: p(m.DedupeKey),
		coalesce: p(m.CoalesceKey), sourceID: p(m.SourceID), payload: p(m.Payload), author: p(m.Author), url: p(m.URL),
		repo: p(m.Repo), number: p(m.Number), branch: p(m.Branch), priorities: m.Priorities,
		attributes: named(m.Attributes), fields: named(m.Fields), kindPath: m.Kind,
	}
}

// text reads a scalar at path as text; an unset path or absent value is "".
func text(doc any, key string, path Path) (string, error) {
	if path == nil {
		return "", nil
	}
	v, ok := path.Lookup(doc)
	if !ok {
		return "", nil
	}
	s, err := scalarString(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w at the mapped path", key, err)
	}
	return s, nil
}

// mapped builds an item from a foreign document by the connector's paths. payload
// is the document as JSON, the notification's payload unless a payload path is
// mapped. headerKind is the kind a provider names in a header (Shopify's topic), used
// when the mapped kind path yields none.
func (c *connector) mapped(doc any, payload []byte, headerKind string) (connectors.Item, error) {
	m := c.mapping
	var err error
	get := func(key string, p Path) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = text(doc, key, p)
		return s
	}
	kind := cmp.Or(get("kind", m.kind), headerKind, c.cfg.DefaultKind, c.preset.defaultKind)
	if suffix := get("kind_suffix", m.kindSuffix); suffix != "" && kind != "" {
		kind += "." + suffix
	}
	summary := get("summary", m.summary)
	prioText := get("priority", m.priority)
	dedupe, coalesce := get("dedupe_key", m.dedupe), get("coalesce_key", m.coalesce)
	sourceID := get("source_id", m.sourceID)
	author, url := get("author", m.author), get("url", m.url)
	repo, numberText, branch := get("repo", m.repo), get("number", m.number), get("branch", m.branch)
	if err != nil {
		return connectors.Item{}, err
	}
	if kind == "" {
		return connectors.Item{}, fmt.Errorf("kind: required (nothing at the mapped path %q and no default_kind)", m.kindPath)
	}

	attrs := inbox.Attributes{}
	if repo != "" {
		attrs = attrs.Set("repo", repo)
	}
	number, _ := strconv.Atoi(numberText)
	if number > 0 {
		attrs = attrs.Set("number", number)
	}
	if url != "" {
		attrs = attrs.Set("url", url)
	}
	if author != "" {
		attrs = attrs.Set("author", author)
	}
	fields := connectors.Fields{Repo: repo, Number: number, Branch: branch, Author: author, Extra: map[string]string{}}
	for _, np := range m.attributes {
		v, ok := np.path.Lookup(doc)
		if !ok {
			continue
		}
		val, verr := scalarValue(v)
		if verr != nil {
			return connectors.Item{}, fmt.Errorf("attributes.%s: %w at the mapped path", np.name, verr)
		}
		attrs = attrs.Set(np.name, val)
		if val != nil {
			fields.Extra[np.name] = inbox.FormatValue(val)
		}
	}
	for _, np := range m.fields {
		s, ferr := text(doc, "fields."+np.name, np.path)
		if ferr != nil {
			return connectors.Item{}, ferr
		}
		if s != "" {
			fields.Extra[np.name] = s
		}
	}

	it := connectors.Item{
		Kind:        kind,
		Priority:    c.mappedPriority(prioText),
		Summary:     c.summary(summary, kind),
		DedupeKey:   dedupe,
		CoalesceKey: coalesce,
		SourceID:    sourceID,
		Attributes:  attrs,
		Fields:      fields,
		Payload:     payload,
	}
	if m.payload != nil {
		if v, ok := m.payload.Lookup(doc); ok {
			if b, merr := json.Marshal(v); merr == nil {
				it.Payload = b
			}
		} else {
			it.Payload = nil
		}
	}
	it.Message = &connectors.Message{Name: cmp.Or(author, c.cfg.Name), From: Source, Text: it.Summary}
	if c.cfg.Mapping == nil && c.preset.net != nil {
		c.preset.net(doc, &it)
	}
	return it, nil
}

// mappedPriority translates a sender's value: the priorities table first, then our
// own names, then the default. A foreign severity never rejects a delivery.
func (c *connector) mappedPriority(v string) inbox.Priority {
	if p, ok := c.mapping.priorities[v]; ok {
		return p
	}
	if p := inbox.Priority(v); p.Valid() {
		return p
	}
	return c.defaultPriority()
}
