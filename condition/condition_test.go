package condition

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileErrorsSayWhere(t *testing.T) {
	for src, want := range map[string]string{
		`presnce == "active"`:            "line 1, column 1: unknown name presnce",
		`kind == "comment" &&`:           "line 1, column",
		`kind`:                           "bool",
		`"x" + 1 > 0`:                    "line 1",
		``:                               "empty expression",
		strings.Repeat("1+", 1500) + "1": "characters",
		`repeat("x", 1000000000) != ""`:  "repeat",
	} {
		_, err := Compile(src, PolicyEnv{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%.40q) = %v, want an error containing %q", src, err, want)
		}
	}
	if _, err := Compile(`presence == "idle"`, RouteEnv{}); err == nil || !strings.Contains(err.Error(), "unknown name presence") {
		t.Errorf("a route cannot see presence: %v", err)
	}
}

func TestMatch(t *testing.T) {
	env := &PolicyEnv{Presence: "active", Record: Record{Kind: "comment", Priority: "medium",
		Metadata: map[string]any{"author_is_bot": true},
		Payload:  DecodePayload([]byte(`{"check_run":{"name":"lint (go)"}}`))}}
	for src, want := range map[string]bool{
		`metadata.author_is_bot && kind == "comment"`:    true,
		`presence == "active" && priority == "medium"`:   true,
		`payload.check_run.name matches "^lint"`:         true,
		`payload.check_run.name matches "^test"`:         false,
		`payload?.pull_request?.title matches "^WIP"`:    false,
		`thread.agent == "" && now.Year() == 1`:          true,
		`metadata.author_is_bot == true && kind == "pr"`: false,
	} {
		c, err := Compile(src, PolicyEnv{})
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		if got, err := c.Match(env, NewBudget(Limits{})); got != want || err != nil {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
}

// An attacker controls the payload, not the expression: a missing field or a
// payload of the wrong shape is a non-match, never a panic.
func TestMatchHostilePayload(t *testing.T) {
	c, err := Compile(`payload.check_run.name matches "^lint"`, PolicyEnv{})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{``, `not json`, `[1,2]`, `{"check_run":7}`, `{"check_run":{"name":["a"]}}`, `{}`} {
		got, _ := c.Match(&PolicyEnv{Record: Record{Payload: DecodePayload([]byte(body))}}, NewBudget(Limits{}))
		if got {
			t.Errorf("body %q matched", body)
		}
	}
}

// Cost is bounded: a range that would allocate a billion elements fails on the
// memory budget instead, as a budget overrun.
func TestMemoryBudget(t *testing.T) {
	c, err := Compile(`len(1..1000000000) > 0`, PolicyEnv{})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBudget(Limits{})
	if ok, err := c.Match(&PolicyEnv{}, b); ok || !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("got %v, %v; want the memory budget error", ok, err)
	}
	if b.Stopped() != 1 {
		t.Errorf("stopped = %d, want 1", b.Stopped())
	}
}
