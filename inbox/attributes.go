package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Attribute is one key/value pair of an Attributes list.
type Attribute struct {
	Key   string
	Value any
}

// Attributes is an insertion-ordered map. Signals render their attributes in
// insertion order, so a Go map (random order) cannot hold them.
// Values are strings, numbers (float64, int, int64, json.Number) or bools.
type Attributes []Attribute

// Get returns the value for key and whether it was present.
func (a Attributes) Get(key string) (any, bool) {
	for _, kv := range a {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// String returns the value for key formatted as text, or "".
func (a Attributes) String(key string) string {
	v, ok := a.Get(key)
	if !ok || v == nil {
		return ""
	}
	return FormatValue(v)
}

// Set replaces the value of key in place, or appends it. A nil value removes the key
// (null attributes are dropped, as Mastra does).
func (a Attributes) Set(key string, value any) Attributes {
	for i, kv := range a {
		if kv.Key == key {
			if value == nil {
				return append(a[:i:i], a[i+1:]...)
			}
			a[i].Value = value
			return a
		}
	}
	if value == nil {
		return a
	}
	return append(a, Attribute{Key: key, Value: value})
}

// Merge returns a copy of a with every pair of b set on it (b wins, a's order kept).
func (a Attributes) Merge(b Attributes) Attributes {
	out := a.Clone()
	for _, kv := range b {
		out = out.Set(kv.Key, kv.Value)
	}
	return out
}

// Clone returns an independent copy.
func (a Attributes) Clone() Attributes {
	if a == nil {
		return nil
	}
	return append(Attributes(nil), a...)
}

// FormatValue renders an attribute value the way signal XML shows it.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return json.Number(fmt.Sprint(x)).String()
	default:
		return fmt.Sprint(x)
	}
}

// MarshalJSON writes the pairs as a JSON object in insertion order: the bytes
// json.Marshal gives for each key and value, the common ones (plain ASCII text, int64,
// bools) written directly rather than through an encoder each.
func (a Attributes) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, 32*len(a)+2)
	buf = append(buf, '{')
	for i, kv := range a {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendJSON(buf, kv.Key); err != nil {
			return nil, err
		}
		buf = append(buf, ':')
		if buf, err = appendJSON(buf, kv.Value); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", kv.Key, err)
		}
	}
	return append(buf, '}'), nil
}

// appendJSON appends v as json.Marshal encodes it.
func appendJSON(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if plainJSONText(x) {
			buf = append(buf, '"')
			buf = append(buf, x...)
			return append(buf, '"'), nil
		}
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case nil:
		return append(buf, "null"...), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// plainJSONText reports whether json.Marshal writes s between quotes unchanged: printable
// ASCII without a quote, a backslash or the characters it escapes for HTML.
func plainJSONText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// ErrAttributeValue reports an attribute whose value is not a string, number or bool.
var ErrAttributeValue = errors.New("attribute values must be strings, numbers or booleans")

// UnmarshalJSON reads a JSON object keeping key order. Nulls are dropped; nested
// objects and arrays are rejected.
func (a *Attributes) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*a = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("attributes must be a JSON object")
	}
	out := Attributes{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := vt.(type) {
		case nil:
			out = out.Set(key, nil)
		case string, bool:
			out = out.Set(key, v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				out = out.Set(key, i)
			} else if f, err := v.Float64(); err == nil {
				out = out.Set(key, f)
			} else {
				return fmt.Errorf("attribute %q: %w", key, err)
			}
		default:
			return fmt.Errorf("attribute %q: %w", key, ErrAttributeValue)
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*a = out
	return nil
}
