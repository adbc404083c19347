package github

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// parseLenient decodes a payload go-github's typed decoding refused (a timestamp like
// "2018-04-25 20:42:10", a number where a string was declared): every member that
// does not fit its Go type is left out, the rest decodes as usual. It returns the
// event and the paths it left out; an error only when the document is not an object
// or does not fit even then.
func parseLenient(eventType string, payload []byte) (any, []string, error) {
	zero, err := gh.ParseWebHook(eventType, []byte("{}"))
	if err != nil {
		return nil, nil, err
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, err
	}
	var dropped []string
	fitted, ok := fit(doc, reflect.TypeOf(zero), "", &dropped)
	if !ok {
		return nil, nil, &json.UnmarshalTypeError{Value: "document", Type: reflect.TypeOf(zero)}
	}
	b, err := json.Marshal(fitted)
	if err != nil {
		return nil, nil, err
	}
	parsed, err := gh.ParseWebHook(eventType, b)
	return parsed, dropped, err
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// fit walks v (decoded with UseNumber) alongside t and removes what would not
// decode into it, recording each removed member's path. It reports false when v
// itself does not fit t; the caller then drops v.
func fit(v any, t reflect.Type, path string, dropped *[]string) (any, bool) {
	if v == nil {
		return nil, true // null decodes into anything
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return v, decodes(v, t)
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		fields := jsonFields(t)
		for k, sub := range obj {
			ft, ok := fields[k]
			if !ok {
				ft, ok = fields[strings.ToLower(k)]
			}
			if !ok {
				continue // decoding ignores it
			}
			fitMember(obj, k, sub, ft, path, dropped)
		}
		return obj, true
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, false
		}
		for k, sub := range obj {
			fitMember(obj, k, sub, t.Elem(), path, dropped)
		}
		return obj, true
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return v, decodes(v, t) // []byte is a base64 string
		}
		for i, sub := range arr {
			p := path + "[" + strconv.Itoa(i) + "]"
			if nv, ok := fit(sub, t.Elem(), p, dropped); ok {
				arr[i] = nv
			} else {
				arr[i] = nil
				*dropped = append(*dropped, strings.TrimPrefix(p, "."))
			}
		}
		return arr, true
	case reflect.Interface:
		return v, true
	default:
		return v, decodes(v, t)
	}
}

func fitMember(obj map[string]any, k string, sub any, t reflect.Type, path string, dropped *[]string) {
	p := path + "." + k
	if nv, ok := fit(sub, t, p, dropped); ok {
		obj[k] = nv
		return
	}
	delete(obj, k)
	*dropped = append(*dropped, strings.TrimPrefix(p, "."))
}

// decodes reports whether v decodes into a value of type t.
func decodes(v any, t reflect.Type) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, reflect.New(t).Interface()) == nil
}

// jsonFields maps a struct's JSON member names to field types, as encoding/json
// names them (tag name, else the field name; embedded structs promote theirs).
// Each name is also listed lower-cased for encoding/json's case-insensitive match.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, taken := out[k]; !taken {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
		if lower := strings.ToLower(name); lower != name {
			if _, taken := out[lower]; !taken {
				out[lower] = f.Type
			}
		}
	}
	return out
}
