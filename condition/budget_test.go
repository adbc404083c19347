package condition

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signalgate/signalgate/condition/conditiontest"
)

// stillClock never moves: only the step budget can run out, whatever the machine's speed.
func stillClock() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) }

func mustCompile(t *testing.T, src string) *Condition {
	t.Helper()
	c, err := Compile(src, RouteEnv{})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return c
}

// The attacker's body makes a fair expression quadratic: 30,000 × 30,000 compares.
// It stops on the steps (a few dozen scans), does not match, and says why.
func TestBudgetStopsQuadraticScan(t *testing.T) {
	c := mustCompile(t, conditiontest.ScanWhen)
	b := NewBudget(Limits{Now: stillClock})
	ok, err := c.Match(&RouteEnv{Record: Record{Payload: DecodePayload(conditiontest.ScanBomb())}}, b)
	if ok || !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("got %v, %v; want a non-match on the budget", ok, err)
	}
	if want := `when "any(payload.items, {# in payload.blocked})": expression budget exceeded: more than 1000000 steps`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if b.Stopped() != 1 {
		t.Errorf("stopped = %d, want 1", b.Stopped())
	}
	// The event's budget is spent: its next expression does not run at all.
	cheap := mustCompile(t, `kind == "scan"`)
	if ok, err := cheap.Match(&RouteEnv{Record: Record{Kind: "scan"}}, b); ok || !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("after the budget is spent: %v, %v", ok, err)
	}
	if b.Stopped() != 2 {
		t.Errorf("stopped = %d, want 2", b.Stopped())
	}
}

// The same expression over a body of ordinary size matches, under the default budget.
func TestBudgetLetsOrdinaryBodiesThrough(t *testing.T) {
	c := mustCompile(t, conditiontest.ScanWhen+` && all(payload.items, {# > 0}) && len(filter(payload.items, {# > 1})) == 2 && "x" in fields`)
	env := &RouteEnv{Record: Record{Payload: DecodePayload([]byte(`{"items":[1,2,3],"blocked":[4,5,2]}`))},
		Fields: map[string]any{"x": 1}}
	if ok, err := c.Match(env, NewBudget(Limits{Now: stillClock})); !ok || err != nil {
		t.Fatalf("got %v, %v; want a match", ok, err)
	}
}

// Every iteration looks at the clock: an evaluation whose time is up stops at the next
// iteration, not at the end of the array.
func TestBudgetDeadlineStopsTheLoop(t *testing.T) {
	start := stillClock()
	reads := 0
	clock := func() time.Time {
		reads++
		if reads == 1 { // the first expression's start: the deadline is 50ms after it
			return start
		}
		return start.Add(time.Second)
	}
	c := mustCompile(t, `any(payload.items, {# == 0})`)
	b := NewBudget(Limits{Now: clock})
	ok, err := c.Match(&RouteEnv{Record: Record{Payload: DecodePayload(conditiontest.ScanBomb())}}, b)
	if ok || !errors.Is(err, ErrBudgetExceeded) || !strings.HasSuffix(err.Error(), "expression budget exceeded: over 50ms") {
		t.Fatalf("got %v, %v; want a non-match over the time budget", ok, err)
	}
	if reads != 2 {
		t.Errorf("the clock was read %d times: the loop went on after its time was up", reads)
	}
}

// Steps are charged for the work done: a builtin's result by its size, a closure by
// its body per element, `in` by what it scans (a map lookup is one step).
func TestBudgetSteps(t *testing.T) {
	env := func() *RouteEnv {
		return &RouteEnv{Record: Record{Payload: DecodePayload([]byte(`{"a":[1,2,3,4,5,6,7,8,9,10],"m":{"k":1}}`))}}
	}
	for src, steps := range map[string]int64{
		`"k" in payload.m && "j" not in payload.m`: 2,  // two lookups
		`11 in payload.a`:                          10, // a scan of 10
		`len(toJSON(payload.a)) > 0`:               55, // toJSON's 53 bytes (indented) and len's int, one step per call
		`any(payload.a, {# > 10})`:                 31, // 10 iterations of a 3-node body, one for the builtin
		`none(payload.a, {# in payload.a})`:        19, // one iteration: the scan of 10, the 8-node body, the builtin
	} {
		c := mustCompile(t, src)
		if _, err := c.Match(env(), NewBudget(Limits{Steps: steps, Now: stillClock})); err != nil {
			t.Errorf("%s with %d steps: %v", src, steps, err)
		}
		if _, err := c.Match(env(), NewBudget(Limits{Steps: steps - 1, Now: stillClock})); !errors.Is(err, ErrBudgetExceeded) {
			t.Errorf("%s with %d steps: %v, want the budget exceeded", src, steps-1, err)
		}
	}
}

// The hooks the budget compiles in cannot be named by an expression.
func TestBudgetHooksAreNotNames(t *testing.T) {
	for _, src := range []string{`__signalgate_step($env, true, -1000000)`, `__signalgate_scan($env, []) == []`} {
		if _, err := Compile(src, RouteEnv{}); err == nil || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("Compile(%q) = %v, want unknown name", src, err)
		}
	}
}
