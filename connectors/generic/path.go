package generic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a dotted JSON path: "$.data.description", "data.items.0.id" (a numeric
// segment indexes an array), or "$" for the whole document. Keys that contain a
// dot cannot be addressed; that keeps the syntax one line of documentation.
type Path []string

// ParsePath parses a dotted path; the leading "$." is optional.
func ParsePath(s string) (Path, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty path")
	}
	if s == "$" {
		return Path{}, nil
	}
	s = strings.TrimPrefix(s, "$.")
	parts := strings.Split(s, ".")
	for i, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("path %q: empty segment %d", s, i+1)
		}
	}
	return Path(parts), nil
}

// Lookup returns the value at p in a document decoded with json.Decoder.UseNumber.
func (p Path) Lookup(doc any) (any, bool) {
	cur := doc
	for _, seg := range p {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// errNotScalar reports an object or array where text was wanted.
var errNotScalar = errors.New("want a string, number or boolean")

// scalarString formats a scalar as text; null and absent are "".
func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", errNotScalar
}

// scalarValue keeps numbers and bools typed for attributes.
func scalarValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return f, nil
	}
	return nil, errNotScalar
}
