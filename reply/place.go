package reply

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Place is one connector kind's place: the fields of a replyTo besides source and
// connector, as the kind's package declares them (a struct whose json tags name the
// fields and whose doc tags describe them for the API documents).
type Place interface {
	// Key is the place's canonical form: an agent's replyTo names a thread's origin when
	// their keys are equal. What the key leaves out (an email's sender and subject) is
	// always the origin's, never the agent's.
	Key() string
	// Describe says briefly where an answer goes, for the console ("C1/1700000000.1").
	Describe() string
	// WatchResource is the conversation the place belongs to, as a watch of its source
	// names it (canonical); ok is false when the place names none.
	WatchResource() (resource string, ok bool)
}

// Instructed is a place some of whose fields are the agent's to set: what to do at the
// place rather than where it is (an alert's silence). The outbox answers at the thread's
// origin, never at the place an agent wrote; it keeps these fields of the agent's
// replyTo. They are no part of the place's Key.
type Instructed interface {
	Place
	// Instruct is the place with the instructions of asked, an agent's place of the
	// same kind and key.
	Instruct(asked Place) Place
}

// PlaceCodec reads one connector kind's places (the kind's row of the kinds table
// carries it).
type PlaceCodec interface {
	// Decode reads a To's place fields; fields the kind does not have are dropped.
	Decode(fields json.RawMessage) (Place, error)
	// Type is the place's Go type: its fields, for the API documents' replyTo schema.
	Type() reflect.Type
}

// Codec is the PlaceCodec of a kind whose places are P.
type Codec[P Place] struct{}

// Decode reads fields into a P.
func (Codec[P]) Decode(fields json.RawMessage) (Place, error) {
	var p P
	if len(fields) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(fields, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// Type is P.
func (Codec[P]) Type() reflect.Type { return reflect.TypeFor[P]() }

// NewTo is the To of place p of the source's connector: what a connector puts under
// metadata.replyTo.
func NewTo[P Place](source, connector string, p P) To {
	raw, err := json.Marshal(p)
	if err == nil {
		raw, err = canonicalPlace(raw)
	}
	if err != nil {
		// A place is a struct of strings and numbers, which always encodes.
		panic(fmt.Sprintf("reply: encode a %T place: %v", p, err))
	}
	return To{Source: source, Connector: connector, Place: raw}
}

// PlaceOf reads t's place as a P: a kind's sender reads its own places with it. Fields
// P does not have are dropped.
func PlaceOf[P Place](t To) (P, error) {
	var p P
	if len(t.Place) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(t.Place, &p); err != nil {
		return p, fmt.Errorf("read the %s place of replyTo: %w", t.Source, err)
	}
	return p, nil
}

// PlaceKind is a connector kind that answers: its source and its place codec.
type PlaceKind struct {
	Source string
	Codec  PlaceCodec
}

// Places are the connector kinds that answer, in the kinds table's order (which builds
// them from the rows that have a place codec). A source not among them names no place.
type Places []PlaceKind

// Sources are the kinds' sources, in order.
func (ps Places) Sources() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Source
	}
	return out
}

func (ps Places) codec(source string) (PlaceCodec, bool) {
	for _, p := range ps {
		if p.Source == source {
			return p.Codec, true
		}
	}
	return nil, false
}

// Place reads t's place with its kind's codec, dropping fields the kind does not have.
// A source no kind of ps answers for is ErrUnknownPlace.
func (ps Places) Place(t To) (Place, error) {
	c, ok := ps.codec(t.Source)
	if !ok {
		return nil, fmt.Errorf("%w: no connector kind of source %q answers", ErrUnknownPlace, t.Source)
	}
	p, err := c.Decode(t.Place)
	if err != nil {
		return nil, fmt.Errorf("%w: replyTo: %s", ErrInvalid, describeJSONError(err))
	}
	return p, nil
}

// check refuses an agent's replyTo with a field no kind's places have, or a value of a
// field's wrong type: ErrInvalid naming the field. A field of another kind than the
// source's is no part of the place, and ignored.
func (ps Places) check(t To) error {
	fields, err := ps.Fields()
	if err != nil {
		return err
	}
	got, err := placeFields(t.Place)
	if err != nil {
		return fmt.Errorf("%w: replyTo: %v", ErrInvalid, err)
	}
	for _, g := range got {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == g.name })
		if i < 0 {
			return fmt.Errorf("%w: replyTo: unknown field %q", ErrInvalid, g.name)
		}
		v := reflect.New(fields[i].Go)
		if err := json.Unmarshal(g.value, v.Interface()); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				typ.Field = g.name
				return fmt.Errorf("%w: replyTo: %s", ErrInvalid, describeJSONError(typ))
			}
			return fmt.Errorf("%w: replyTo.%s: %v", ErrInvalid, g.name, err)
		}
	}
	return nil
}

// Normal is t as its kind writes it (fields it does not have dropped): a thread's
// origin as the outbox keeps and shows it. t is answered as it is when its source or
// its place is not readable.
func (ps Places) Normal(t To) To {
	c, ok := ps.codec(t.Source)
	if !ok {
		return t
	}
	p, err := c.Decode(t.Place)
	if err != nil {
		return t
	}
	raw, err := json.Marshal(p)
	if err == nil {
		raw, err = canonicalPlace(raw)
	}
	if err != nil {
		return t
	}
	t.Place = raw
	return t
}

// instruct is origin with the instructions of asked when its kind's places take
// any (Instructed); origin as it is otherwise.
func (ps Places) instruct(origin, asked To) (To, error) {
	o, err := ps.Place(origin)
	if err != nil {
		return origin, nil
	}
	in, ok := o.(Instructed)
	if !ok {
		return origin, nil
	}
	a, err := ps.Place(asked)
	if err != nil {
		return To{}, err
	}
	raw, err := json.Marshal(in.Instruct(a))
	if err == nil {
		raw, err = canonicalPlace(raw)
	}
	if err != nil {
		return To{}, fmt.Errorf("encode the place of replyTo: %w", err)
	}
	origin.Place = raw
	return origin, nil
}

// key is what identifies where t answers: its source, connector and its place's key.
func (ps Places) key(t To) (string, error) {
	p, err := ps.Place(t)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%q %q %s", t.Source, t.Connector, p.Key()), nil
}

// WatchResource is the conversation t's place belongs to, as a watch of its source
// names it; ok is false when it names none or its kind is not known.
func (ps Places) WatchResource(t To) (resource string, ok bool) {
	p, err := ps.Place(t)
	if err != nil {
		return "", false
	}
	return p.WatchResource()
}

// Describe says briefly where t answers: "slack ops C1/1700000000.1". A place whose
// kind is not known is named by its source and connector alone.
func (ps Places) Describe(t To) string {
	parts := []string{t.Source, t.Connector}
	if p, err := ps.Place(t); err == nil {
		if d := p.Describe(); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, " ")
}

// Field is one field of a kind's places, as the API documents describe it.
type Field struct {
	Name string // its JSON name
	// Type is its JSON type: string, integer, boolean, or array of Items.
	Type, Items string
	Doc         string
	// Go is its Go type (a schema generator reads it).
	Go reflect.Type
}

// Fields are the fields of every kind's places, each name once, in the kinds' order.
// Two kinds that name a field alike must give it one JSON type.
func (ps Places) Fields() ([]Field, error) {
	var out []Field
	seen := map[string]Field{}
	for _, p := range ps {
		t := p.Codec.Type()
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("reply: the places of %s are a %s, not a struct", p.Source, t)
		}
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if !sf.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			f := Field{Name: name, Doc: sf.Tag.Get("doc"), Go: sf.Type}
			f.Type, f.Items = jsonType(sf.Type)
			if f.Type == "" || (f.Type == "array" && f.Items == "") {
				return nil, fmt.Errorf("reply: the places of %s: field %s is a %s, which the API documents cannot describe", p.Source, name, sf.Type)
			}
			if name == "source" || name == "connector" {
				return nil, fmt.Errorf("reply: the places of %s: field %s is every replyTo's own", p.Source, name)
			}
			if prev, ok := seen[name]; ok {
				if prev.Type != f.Type || prev.Items != f.Items {
					return nil, fmt.Errorf("reply: the places of %s: field %s is of JSON type %s, another kind's of %s", p.Source, name, f.Type, prev.Type)
				}
				continue
			}
			seen[name] = f
			out = append(out, f)
		}
	}
	return out, nil
}

// jsonType is the JSON type of a place field of Go type t ("" when it has none here).
func jsonType(t reflect.Type) (typ, items string) {
	switch t.Kind() {
	case reflect.String:
		return "string", ""
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", ""
	case reflect.Bool:
		return "boolean", ""
	case reflect.Slice:
		items, _ := jsonType(t.Elem())
		if t.Elem().Kind() == reflect.Slice {
			items = ""
		}
		return "array", items
	}
	return "", ""
}

// describeJSONError says what is wrong with place fields, naming the field.
func describeJSONError(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		want := typ.Type.String()
		switch j, _ := jsonType(typ.Type); j {
		case "integer", "array":
			want = "an " + j
		case "string", "boolean":
			want = "a " + j
		}
		return fmt.Sprintf("%s: want %s, got JSON %s", typ.Field, want, typ.Value)
	}
	return err.Error()
}
