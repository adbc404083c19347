package condition

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"time"

	"github.com/expr-lang/expr/ast"
)

// ErrBudgetExceeded is why an expression stopped before it decided: the event's
// steps or time ran out, or one evaluation hit expr's memory budget. The expression
// does not match.
var ErrBudgetExceeded = errors.New("expression budget exceeded")

// Default limits on the expressions one event evaluates at one place (its routes, or
// its records' policy rules).
const (
	// DefaultSteps is the work the expressions may do: one step per element an `in`
	// scans or a builtin returns, and per syntax node a closure runs per element.
	// A million is tens of milliseconds of scanning.
	DefaultSteps = 1_000_000
	// DefaultTime is the CPU time they may take.
	DefaultTime = 50 * time.Millisecond
	// MemoryBudget is expr's own bound on what one evaluation allocates (elements of
	// ranges, arrays and maps it builds).
	MemoryBudget = 1_000_000
	// clockEvery is how many steps pass between two looks at the clock (a system call).
	clockEvery = 1024
)

// Limits bound the expressions evaluated for one event at one place.
type Limits struct {
	Steps int64
	Time  time.Duration
	// Now is the clock Time is measured on; nil is the CPU time of the thread
	// evaluating (the wall clock where the system has no such clock), so that a
	// machine busy with other work does not stop an expression early.
	Now func() time.Time
}

// DefaultLimits are DefaultSteps and DefaultTime of CPU.
func DefaultLimits() Limits { return Limits{Steps: DefaultSteps, Time: DefaultTime} }

// Budget is what is left of one event's Limits. Every Match given it draws on it;
// once spent, every later Match on it fails at once. Only the time spent inside
// Match counts (an ingest waits for the database between two). Not safe for
// concurrent use: an event's expressions are evaluated one after another.
type Budget struct {
	steps, left int64
	limit       time.Duration
	now         func() time.Time // nil: the thread's CPU time
	used        time.Duration    // in earlier Matches
	since       time.Time        // the clock when this Match began
	unread      int64            // steps since the clock was last read
	err         error            // why it is spent; nil while some is left
	stopped     int              // expressions that stopped on ErrBudgetExceeded
}

// NewBudget starts the budget of one event; zero fields of l take the defaults.
func NewBudget(l Limits) *Budget {
	if l.Steps <= 0 {
		l.Steps = DefaultSteps
	}
	if l.Time <= 0 {
		l.Time = DefaultTime
	}
	return &Budget{steps: l.Steps, left: l.Steps, limit: l.Time, now: l.Now}
}

// Stopped is how many expressions stopped on the budget (not matched) so far.
func (b *Budget) Stopped() int { return b.stopped }

func (b *Budget) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return threadCPU()
}

// enter starts a Match's share of the time; the CPU clock needs the goroutine to stay
// on its thread until leave.
func (b *Budget) enter() {
	if b.now == nil {
		runtime.LockOSThread()
	}
	b.since = b.clock()
}

func (b *Budget) leave() {
	if b.err == nil {
		b.used += b.clock().Sub(b.since)
	}
	if b.now == nil {
		runtime.UnlockOSThread()
	}
}

// charge takes n steps, and looks at the clock every clockEvery steps: an error once
// either runs out.
func (b *Budget) charge(n int64) error {
	if b.err != nil {
		return b.err
	}
	b.left -= n
	b.unread += n
	switch {
	case b.left < 0:
		b.err = fmt.Errorf("%w: more than %d steps", ErrBudgetExceeded, b.steps)
	case b.unread >= clockEvery:
		b.unread = 0
		if b.used+b.clock().Sub(b.since) >= b.limit {
			b.err = fmt.Errorf("%w: over %s", ErrBudgetExceeded, b.limit)
		}
	}
	return b.err
}

// expr's VM cannot be interrupted (no context, no step hook), and a goroutine cannot
// be stopped from outside, so a deadline checked around the VM would leave the CPU
// burning. Instead the compiled program reports its own work as it goes: Compile
// patches the tree so that every closure iteration, every builtin call and every
// `in` over an array calls back into the event's Budget, which fails the run once
// its steps or time are spent. What runs between two checks is one builtin or one
// operator over a value at most the size of the body, so an evaluation stops within
// the deadline plus one such operation. The hooks are named with a prefix no
// expression can use: Compile type-checks the source without them first.
const (
	stepFunc = "__signalgate_step" // (env, value, weight): charges weight plus the value's size
	scanFunc = "__signalgate_scan" // (env, collection): charges what `in` scans
)

// meter is the ast.Visitor that inserts the hooks. ast.Walk visits children first, so
// a node's own hooks are inserted after its children's. err is the first expression it
// refuses (a regular expression over MaxRegexInstructions), placed in src.
type meter struct {
	src string
	err error
}

func (m *meter) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		// After each iteration: the body's size in steps, and a look at the clock.
		n.Node = hook(stepFunc, n.Node, &ast.IntegerNode{Value: countNodes(n.Node)})
	case *ast.BuiltinNode:
		ast.Patch(node, hook(stepFunc, n, &ast.IntegerNode{Value: 1}))
	case *ast.BinaryNode:
		switch n.Operator {
		case "in", "not in":
			n.Right = hook(scanFunc, n.Right)
		case "matches":
			m.meterMatches(node, n)
		}
	}
}

// hook wraps v in a call that returns v, keeping v's type for the checker.
func hook(name string, v ast.Node, args ...ast.Node) ast.Node {
	call := &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: name},
		Arguments: append([]ast.Node{&ast.IdentifierNode{Value: "$env"}, v}, args...),
	}
	call.SetLocation(v.Location())
	call.SetNature(*v.Nature())
	return call
}

type nodeCounter struct{ n int }

func (c *nodeCounter) Visit(*ast.Node) { c.n++ }

func countNodes(n ast.Node) int {
	var c nodeCounter
	ast.Walk(&n, &c)
	return c.n
}

// budgeted is the env every expression runs against (*PolicyEnv, *RouteEnv).
type budgeted interface{ record() *Record }

func (r *Record) record() *Record { return r }

func budgetOf(env any) (*Budget, error) {
	e, ok := env.(budgeted)
	if !ok || e.record().budget == nil {
		return nil, errors.New("evaluated without a budget")
	}
	return e.record().budget, nil
}

func step(params ...any) (any, error) {
	b, err := budgetOf(params[0])
	if err != nil {
		return nil, err
	}
	w, _ := params[2].(int)
	if err := b.charge(int64(w) + size(params[1], true)); err != nil {
		return nil, err
	}
	return params[1], nil
}

func scan(params ...any) (any, error) {
	b, err := budgetOf(params[0])
	if err != nil {
		return nil, err
	}
	if err := b.charge(size(params[1], false)); err != nil {
		return nil, err
	}
	return params[1], nil
}

// size is a value's length in elements (bytes for a string); a map counts its
// entries when built, one when looked up.
func size(v any, built bool) int64 {
	switch v := v.(type) {
	case nil, bool, int, float64:
		return 0
	case string:
		return int64(len(v))
	case []any:
		return int64(len(v))
	case map[string]any:
		if !built {
			return 1
		}
		return int64(len(v))
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.String:
		return int64(rv.Len())
	case reflect.Map:
		if !built {
			return 1
		}
		return int64(rv.Len())
	}
	return 0
}
