// Package condition compiles the `when:` expressions of policy rules and routes
// (expr-lang/expr) once at config load and evaluates them against a record.
//
// Cost is bounded by construction: the language has no loops or recursion, an
// expression is at most MaxLength characters and MaxNodes syntax nodes, the
// builtins that build large values from small inputs (repeat) are disabled, every
// evaluation runs under the VM's memory budget (ranges like 1..1e9 fail instead of
// allocating), and `matches` uses Go's linear-time regexp. What is left to iterate
// (any/all/filter over a payload array) is bounded by the request body limit.
package condition

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Limits on an expression's size.
const (
	MaxLength = 2000
	MaxNodes  = 500
)

// Thread names the thread a record is for.
type Thread struct {
	Agent    string `expr:"agent"`
	Resource string `expr:"resource"`
	ID       string `expr:"id"`
}

// Record is what every expression sees of the record or item it decides on.
type Record struct {
	Source     string         `expr:"source"`
	Kind       string         `expr:"kind"`
	Priority   string         `expr:"priority"`
	Route      string         `expr:"route"`
	Attributes map[string]any `expr:"attributes"`
	Metadata   map[string]any `expr:"metadata"`
	// Payload is the event's body as JSON (the provider's documented payload), nil
	// when the body is not JSON (email).
	Payload any `expr:"payload"`
}

// PolicyEnv is what a `policy.rules[].when` sees.
type PolicyEnv struct {
	Record
	Presence string    `expr:"presence"` // active | idle
	Thread   Thread    `expr:"thread"`
	Now      time.Time `expr:"now"`
}

// RouteEnv is what a `routes[].match.when` sees: a route says what an event is
// and runs before a thread exists, so it has no presence, thread or clock (time
// of day belongs to the policy), and route is the route's own name.
type RouteEnv struct {
	Record
	Fields map[string]any `expr:"fields"` // the route fields by config key (repo, number, labels…)
}

// Condition is one compiled expression.
type Condition struct {
	src  string
	prog *vm.Program
}

// Compile type-checks src against env (PolicyEnv{} or RouteEnv{}) and requires a
// boolean result. Errors say where: "line 1, column 10: unknown name presnce".
func Compile(src string, env any) (*Condition, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("empty expression")
	}
	if len(src) > MaxLength {
		return nil, fmt.Errorf("expression is %d characters, at most %d", len(src), MaxLength)
	}
	prog, err := expr.Compile(src, expr.Env(env), expr.AsBool(), expr.MaxNodes(MaxNodes), expr.DisableBuiltin("repeat"))
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("line %d, column %d: %s", fe.Line, fe.Column+1, fe.Message)
		}
		return nil, err
	}
	return &Condition{src: src, prog: prog}, nil
}

// String is the source text.
func (c *Condition) String() string { return c.src }

// Match evaluates c against env (a *PolicyEnv or *RouteEnv matching Compile's).
// A runtime error (a missing payload field used as a string, the memory budget)
// is a non-match, returned so explain can show it.
func (c *Condition) Match(env any) (bool, error) {
	out, err := expr.Run(c.prog, env)
	if err != nil {
		return false, fmt.Errorf("when %q: %w", c.src, err)
	}
	b, _ := out.(bool)
	return b, nil
}

// DecodePayload parses an event body for `payload`; a body that is not JSON
// yields nil.
func DecodePayload(body []byte) any {
	var v any
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return nil
	}
	return v
}
