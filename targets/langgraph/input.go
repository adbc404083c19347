package langgraph

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// Input is target.input compiled: a JSON value whose strings are templates over the
// signal (InputData), rendered into a run's input (or a state update's values).
type Input struct {
	root node
}

// node is one value of the input: a template, an object, a list or another JSON value.
type node struct {
	tmpl   *template.Template
	object map[string]node
	list   []node
	value  any
}

// InputData is what the input's templates see of a signal.
type InputData struct {
	XML      string // the signal as the model reads it
	ID       string // the signal id
	Type     string // notification, notification-summary, user, …
	Tag      string
	Contents string
	Priority string // urgent, high, medium or low; "" for a message
	Agent    string
	Resource string
	Thread   string
}

// maxInputDepth bounds how deep target.input nests.
const maxInputDepth = 32

// CompileInput parses every string of in as a template; errors name the value's path.
func CompileInput(in map[string]any) (*Input, error) {
	if in == nil {
		in = DefaultInput()
	}
	root, err := compile(in, "", 0)
	if err != nil {
		return nil, err
	}
	return &Input{root: root}, nil
}

func compile(v any, path string, depth int) (node, error) {
	if depth > maxInputDepth {
		return node{}, fmt.Errorf("%s: nested deeper than %d", orRoot(path), maxInputDepth)
	}
	switch x := v.(type) {
	case string:
		t, err := template.New(path).Option("missingkey=error").Parse(x)
		if err != nil {
			return node{}, fmt.Errorf("%s: %w", orRoot(path), err)
		}
		return node{tmpl: t}, nil
	case map[string]any:
		out := node{object: make(map[string]node, len(x))}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			n, err := compile(x[k], join(path, k), depth+1)
			if err != nil {
				return node{}, err
			}
			out.object[k] = n
		}
		return out, nil
	case []any:
		out := node{list: make([]node, len(x))}
		for i, e := range x {
			n, err := compile(e, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return node{}, err
			}
			out.list[i] = n
		}
		if out.list == nil {
			out.list = []node{}
		}
		return out, nil
	case nil, bool, int, int64, uint64, float64:
		return node{value: x}, nil
	}
	return node{}, fmt.Errorf("%s: %T is not a JSON value", orRoot(path), v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(the input)"
	}
	return path
}

// Render is the input for one signal.
func (in *Input) Render(d InputData) (any, error) {
	return in.root.render(d)
}

func (n node) render(d InputData) (any, error) {
	switch {
	case n.tmpl != nil:
		var b strings.Builder
		if err := n.tmpl.Execute(&b, d); err != nil {
			return nil, err
		}
		return b.String(), nil
	case n.object != nil:
		out := make(map[string]any, len(n.object))
		for k, c := range n.object {
			v, err := c.render(d)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case n.list != nil:
		out := make([]any, len(n.list))
		for i, c := range n.list {
			v, err := c.render(d)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return n.value, nil
}

// inputData is what the input's templates see of d.
func inputData(d agent.Handoff) InputData {
	return InputData{XML: d.Signal.XML(), ID: d.Signal.ID, Type: string(d.Signal.Type), Tag: d.Signal.TagName,
		Contents: d.Signal.Contents, Priority: priorityOf(d), Agent: d.Thread.Agent, Resource: d.Thread.Resource, Thread: d.Thread.Thread}
}

// priorityOf is the signal's priority attribute ("" when it has none: a message).
func priorityOf(d agent.Handoff) string {
	s := d.Signal.Attributes.String("priority")
	if !inbox.Priority(s).Valid() {
		return ""
	}
	return s
}
