package gateway

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// interpolation replaces ${VAR} and ${VAR:-default} in a document's scalar values
// (never in keys or comments); a bare $ is left alone so secrets may contain it.
type interpolation struct {
	lookup func(string) (string, bool)
	// unset are the variables without a value (and without a default).
	unset []unsetVar
	// vars are the variables each key's value names, set or not, by key path.
	vars map[string][]string
}

// node interpolates n, the value at path, and returns a problem per unset variable.
func (in *interpolation) node(n *yaml.Node, path string) []string {
	var problems []string
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			problems = append(problems, in.node(n.Content[i+1], join(path, n.Content[i].Value))...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			problems = append(problems, in.node(c, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return nil
		}
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			in.vars[path] = append(in.vars[path], m[1])
			if v, ok := in.lookup(m[1]); ok {
				return v
			}
			if m[2] != "" {
				return m[3]
			}
			problems = append(problems, unsetProblem(path, m[1]))
			in.unset = append(in.unset, unsetVar{key: path, name: m[1]})
			return ""
		})
		// An interpolated value is always a string, even if it looks like a number.
		if n.Tag == "" || n.Tag == "!" {
			n.Tag = "!!str"
		}
	}
	return problems
}

// unsetVar is a ${VAR} that had no value: the key holding it, the variable, and the
// key's `_file` form when the key is a secret's.
type unsetVar struct{ key, name, fileKey string }

func unsetProblem(key, name string) string {
	return fmt.Sprintf("%s: environment variable %s is not set", key, name)
}

// setVariable says how to give key a value of one's own, what: "set VAR to what" when
// its value names variables, else "set what in the config file".
func (c *Config) setVariable(key, what string) string {
	if names := c.vars[key]; len(names) > 0 {
		return "set " + strings.Join(names, " and ") + " to " + what
	}
	return "set " + what + " in the config file"
}
