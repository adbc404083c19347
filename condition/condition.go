// Package condition compiles the `when:` expressions of policy rules and routes
// (expr-lang/expr) once at config load and evaluates them against a record.
//
// Cost is bounded: the language has no loops or recursion, an expression is at most
// MaxLength characters and MaxNodes syntax nodes, the builtins that build large
// values from small inputs (repeat) are disabled, every evaluation runs under the
// VM's memory budget (ranges like 1..1e9 fail instead of allocating), `matches` uses
// Go's linear-time regexp with a bounded program (regex.go), and what is left to
// iterate (any/all/filter over payload arrays, `in` over an array, nested) and the
// work of each `matches` draw on the event's Budget of steps and time (budget.go):
// over it, the expression stops and does not match.
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
	budget *Budget // the event's, set by Match; expressions cannot see it

	Source     string         `expr:"source"`
	Kind       string         `expr:"kind"`
	Priority   string         `expr:"priority"`
	Route      string         `expr:"route"`
	Attributes map[string]any `expr:"attributes"`
	Metadata   map[string]any `expr:"metadata"`
	// Payload is the event's body as JSON (the provider's documented payload), a form
	// body's fields as an object of strings (Twilio's), nil when the body is neither
	// (email).
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
	opts := []expr.Option{expr.Env(env), expr.AsBool(), expr.MaxNodes(MaxNodes), expr.DisableBuiltin("repeat")}
	// Checked as written first, so errors speak of the source and no expression can
	// name the budget's hooks; then compiled again with them (budget.go).
	if _, err := expr.Compile(src, opts...); err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("line %d, column %d: %s", fe.Line, fe.Column+1, fe.Message)
		}
		return nil, err
	}
	m := &meter{src: src}
	prog, err := expr.Compile(src, append(opts, expr.Function(stepFunc, step), expr.Function(scanFunc, scan),
		expr.Function(matchFunc, matches), expr.Patch(m))...)
	if m.err != nil {
		return nil, m.err
	}
	if err != nil {
		return nil, fmt.Errorf("meter expression: %w", err)
	}
	return &Condition{src: src, prog: prog}, nil
}

// String is the source text.
func (c *Condition) String() string { return c.src }

// Env is what Match evaluates against: *PolicyEnv or *RouteEnv, as compiled.
type Env interface{ record() *Record }

// Match evaluates c against env, drawing on the event's budget b. A runtime error
// (a missing payload field used as a string) is a non-match, returned so explain can
// show it; one that ran out of budget wraps ErrBudgetExceeded.
func (c *Condition) Match(env Env, b *Budget) (bool, error) {
	if b.err == nil {
		b.enter()
		env.record().budget = b
		out, err := (&vm.VM{MemoryBudget: MemoryBudget}).Run(c.prog, env)
		env.record().budget = nil
		b.leave()
		if err == nil {
			ok, _ := out.(bool)
			return ok, nil
		}
		// expr reports its memory budget as a panic message, not an error value.
		if b.err == nil && !strings.Contains(err.Error(), "memory budget exceeded") {
			return false, fmt.Errorf("when %q: %w", c.src, err)
		}
	}
	b.stopped++
	why := b.err
	if why == nil {
		why = fmt.Errorf("%w: memory budget of %d elements", ErrBudgetExceeded, MemoryBudget)
	}
	return false, fmt.Errorf("when %q: %w", c.src, why)
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
