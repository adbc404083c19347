package condition

import (
	"errors"
	"strings"
	"testing"
)

// An operator's 37-byte regular expression compiles to 5,999 instructions; against a
// sender's 60 KB text Go's linear-time matcher still takes seconds.
const (
	costlyPattern   = `(?:\pL{0,999}\pL{0,999}\pL{0,999})*\d`
	heaviestPattern = `(?:\pL{0,165}\pL{0,165}\pL{0,165})*\d` // just within MaxRegexInstructions
)

// quoted writes a pattern as an expression's string literal.
func quoted(p string) string { return `"` + strings.ReplaceAll(p, `\`, `\\`) + `"` }

func titled(fields map[string]any) *RouteEnv {
	payload := map[string]any{"title": strings.Repeat("a", 60*1024) + "!"}
	for k, v := range fields {
		payload[k] = v
	}
	return &RouteEnv{Record: Record{Payload: payload}}
}

// `matches` is bounded before it runs: the operator's costly pattern is refused when
// the expression is compiled, one the sender puts in the event is refused when it is
// evaluated, and one within the limit draws on the event's budget as instructions ×
// bytes, so over a 60 KB text it stops on the steps instead of running for seconds.
func TestMatchesCostIsBounded(t *testing.T) {
	if _, err := Compile(`payload.title matches `+quoted(costlyPattern), RouteEnv{}); err == nil ||
		!strings.Contains(err.Error(), "line 1, column 23: the regular expression compiles to 5999 instructions, at most 1000") {
		t.Fatalf("compile the costly pattern: %v", err)
	}

	heavy := mustCompile(t, `payload.title matches `+quoted(heaviestPattern))
	b := NewBudget(Limits{Now: stillClock})
	ok, err := heavy.Match(titled(nil), b)
	if ok || !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "more than 1000000 steps") {
		t.Fatalf("heaviest pattern over 60 KB: %v, %v; want a non-match on the step budget", ok, err)
	}

	fromEvent := mustCompile(t, `payload.title matches payload.pattern`)
	ok, err = fromEvent.Match(titled(map[string]any{"pattern": costlyPattern}), NewBudget(Limits{Now: stillClock}))
	if ok || err == nil || !strings.Contains(err.Error(), "matches: the regular expression compiles to 5999 instructions, at most 1000") {
		t.Fatalf("the sender's pattern: %v, %v; want it refused", ok, err)
	}
	ok, err = fromEvent.Match(titled(map[string]any{"pattern": strings.Repeat("a", MaxPatternBytes+1)}), NewBudget(Limits{Now: stillClock}))
	if ok || err == nil || !strings.Contains(err.Error(), "matches: the pattern is 1025 bytes, at most 1024") {
		t.Fatalf("the sender's long pattern: %v, %v; want it refused", ok, err)
	}
}

// Ordinary patterns over the same 60 KB text run within the default budget, and
// `matches` keeps expr's meaning (a search, nil on either side false).
func TestMatchesOrdinary(t *testing.T) {
	for src, want := range map[string]bool{
		`payload.title matches "^a+!$"`:                  true,
		`payload.title matches "(?i)urgent|asap|!"`:      true,
		`payload.title matches "b"`:                      false,
		`payload.title matches payload.pattern`:          true,
		`payload.missing matches "a"`:                    false,
		`payload.title matches payload.missing`:          false,
		`kind matches "^check_" && kind matches "_run$"`: false,
	} {
		ok, err := mustCompile(t, src).Match(titled(map[string]any{"pattern": "a{3}!$"}), NewBudget(Limits{Now: stillClock}))
		if ok != want || err != nil {
			t.Errorf("%s: %v, %v; want %v", src, ok, err, want)
		}
	}
}
