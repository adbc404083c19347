package condition

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
)

// Go's regexp runs in time linear in the text, but proportional to the size of the
// expression's compiled program too, and counted repetitions make a short expression
// large: `(?:\pL{0,999}\pL{0,999}\pL{0,999})*\d` is 37 bytes, 6,001 instructions and
// seconds against a 60 KB text. A match cannot be interrupted, so its cost is bounded
// before it runs: the program's size when the expression is compiled, and the work it
// may do (instructions × bytes) against the event's budget.
const (
	// MaxRegexInstructions bounds a regular expression's compiled program, here and in
	// silence matchers. A kilobyte of alternatives of names compiles to well under it.
	MaxRegexInstructions = 1000
	// MaxPatternBytes bounds a pattern `matches` takes from the event at run time.
	MaxPatternBytes = 1024
	// regexWorkPerStep is how many instruction × byte pairs of a match count as one
	// step of the budget: Go's matcher takes a few nanoseconds per pair at worst, a
	// step a few tens.
	regexWorkPerStep = 4
)

// Regex is a regular expression with its program's size.
type Regex struct {
	*regexp.Regexp
	Instructions int
}

// CompileRegex compiles src as regexp.Compile does and refuses a program of more than
// MaxRegexInstructions; the error says how many it has.
func CompileRegex(src string) (Regex, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return Regex{}, fmt.Errorf("not a regular expression: %w", err)
	}
	// regexp keeps its program to itself: parsed and compiled again as regexp does.
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return Regex{}, fmt.Errorf("not a regular expression: %w", err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return Regex{}, fmt.Errorf("not a regular expression: %w", err)
	}
	if n := len(prog.Inst); n > MaxRegexInstructions {
		return Regex{}, fmt.Errorf("the regular expression compiles to %d instructions, at most %d (each count of a repetition such as {0,999} adds some)",
			n, MaxRegexInstructions)
	}
	return Regex{Regexp: re, Instructions: len(prog.Inst)}, nil
}

// matchFunc replaces expr's `matches` operator (the hook's arguments are the env, the
// text and the pattern: a Regex compiled with the expression, or a string from the
// event).
const matchFunc = "__signalgate_matches"

// meterMatches makes `text matches pattern` a call of matchFunc: a constant pattern
// compiled once here (an error when it is over MaxRegexInstructions), any other at run
// time.
func (m *meter) meterMatches(node *ast.Node, n *ast.BinaryNode) {
	pattern := n.Right
	if s, ok := n.Right.(*ast.StringNode); ok {
		re, err := CompileRegex(s.Value)
		if err != nil {
			if m.err == nil {
				at := (&file.Error{Location: n.Right.Location()}).Bind(file.NewSource(m.src))
				m.err = fmt.Errorf("line %d, column %d: %w", at.Line, at.Column+1, err)
			}
			return
		}
		c := &ast.ConstantNode{Value: re}
		c.SetLocation(n.Right.Location())
		pattern = c
	}
	call := &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: matchFunc},
		Arguments: []ast.Node{&ast.IdentifierNode{Value: "$env"}, n.Left, pattern},
	}
	call.SetLocation(n.Location())
	call.SetNature(*n.Nature())
	ast.Patch(node, call)
}

// matches is `text matches pattern` as expr has it (nil on either side is false),
// charged to the event's budget before it runs: the pattern's instructions × the
// text's bytes, per regexWorkPerStep.
func matches(params ...any) (any, error) {
	b, err := budgetOf(params[0])
	if err != nil {
		return nil, err
	}
	if params[1] == nil || params[2] == nil {
		return false, nil
	}
	text, ok := params[1].(string)
	if !ok {
		return nil, fmt.Errorf("matches: the text is %T, not a string", params[1])
	}
	var re Regex
	switch p := params[2].(type) {
	case Regex:
		re = p
	case string:
		if len(p) > MaxPatternBytes {
			return nil, fmt.Errorf("matches: the pattern is %d bytes, at most %d", len(p), MaxPatternBytes)
		}
		if err := b.charge(int64(len(p))); err != nil {
			return nil, err
		}
		if re, err = CompileRegex(p); err != nil {
			return nil, fmt.Errorf("matches: %w", err)
		}
	default:
		return nil, fmt.Errorf("matches: the pattern is %T, not a string", params[2])
	}
	if err := b.charge(int64(re.Instructions) * int64(len(text)+1) / regexWorkPerStep); err != nil {
		return nil, err
	}
	return re.MatchString(text), nil
}
