package silence

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signalgate/signalgate/condition"
	"github.com/signalgate/signalgate/inbox"
)

// Bounds on what a silence may carry: a silence is compiled and evaluated for every
// record that would be sent, so its size is bounded like a policy rule's.
const (
	MaxMatchers       = 32
	MaxNameBytes      = 128
	MaxValueBytes     = 1024 // a value, or a regular expression's source
	MaxCreatedByBytes = 256
	MaxCommentBytes   = 4096
	// MaxRegexInstructions bounds a regex matcher's compiled program, as it bounds
	// `matches` in expressions: Go's regexp runs in time linear in the value but
	// proportional to the program too, and a short expression with counted
	// repetitions compiles to thousands of instructions (`\pL{0,999}` alone is about
	// 2,000): 37 bytes cost seconds against a long value.
	MaxRegexInstructions = condition.MaxRegexInstructions
	// MaxRegexInputBytes is how much of a record's value a regex matcher reads: the
	// value's sender chooses its length, so a longer one is matched as if it ended
	// at the last whole character within this many bytes. With the program bound,
	// one regex matcher costs at most about ten milliseconds per record.
	MaxRegexInputBytes = 1024
)

// namePattern admits the fixed names and attribute names as connectors make them
// (repo, labels, check_name, slack.channel…).
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:/-]*$`)

// ValidationError is a silence refused for what it says; its message names the field.
type ValidationError struct{ Err error }

func (e *ValidationError) Error() string { return e.Err.Error() }
func (e *ValidationError) Unwrap() error { return e.Err }

// matcher is a Matcher compiled.
type matcher struct {
	name  string
	value string
	equal bool
	re    *regexp.Regexp // nil: equality
}

func (m matcher) matches(s inbox.Subject) bool { return m.matchesValue(field(s, m.name)) }

func (m matcher) matchesValue(v string) bool {
	hit := v == m.value
	if m.re != nil {
		hit = m.re.MatchString(regexInput(v))
	}
	return hit == m.equal
}

// regexInput is the part of v a regex matcher reads: at most MaxRegexInputBytes,
// cut before a character the limit would split.
func regexInput(v string) string {
	if len(v) <= MaxRegexInputBytes {
		return v
	}
	n := MaxRegexInputBytes
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n]
}

// compileRegex compiles a regex matcher's value anchored whole, as Alertmanager
// anchors its regex matchers, and refuses one whose program is over
// MaxRegexInstructions.
func compileRegex(value string) (*regexp.Regexp, error) {
	re, err := condition.CompileRegex("^(?:" + value + ")$")
	return re.Regexp, err
}

// field is a record's value for a matcher name: a fixed name, else the attribute's
// text ("" when the record has none, as Alertmanager reads a missing label).
func field(s inbox.Subject, name string) string {
	switch name {
	case "agent":
		return s.Thread.Agent
	case "resource":
		return s.Thread.Resource
	case "thread":
		return s.Thread.Thread
	case "source":
		return s.Source
	case "kind":
		return s.Kind
	case "route":
		return s.Route
	case "priority":
		if s.Priority == "" {
			return string(inbox.PriorityMedium)
		}
		return string(s.Priority)
	}
	return s.Attributes.String(name)
}

// compiled is a silence ready to match.
type compiled struct {
	Silence
	matchers []matcher
	when     *condition.Condition
}

// compile checks in's matchers and when; errors name the field.
func compile(in Input) ([]matcher, *condition.Condition, []error) {
	var errs []error
	switch n := len(in.Matchers); {
	case n == 0:
		errs = append(errs, errors.New("matchers: at least one is required"))
	case n > MaxMatchers:
		errs = append(errs, fmt.Errorf("matchers: %d, at most %d", n, MaxMatchers))
		return nil, nil, errs
	}
	ms := make([]matcher, 0, len(in.Matchers))
	allEmpty := true
	for i, m := range in.Matchers {
		at := fmt.Sprintf("matchers[%d]", i)
		if len(m.Name) > MaxNameBytes || !namePattern.MatchString(m.Name) {
			errs = append(errs, fmt.Errorf("%s.name: %q is not a name (agent, resource, thread, source, kind, route, priority or an attribute name, at most %d bytes)",
				at, truncate(m.Name, 40), MaxNameBytes))
			continue
		}
		if len(m.Value) > MaxValueBytes {
			errs = append(errs, fmt.Errorf("%s.value: %d bytes, at most %d", at, len(m.Value), MaxValueBytes))
			continue
		}
		c := matcher{name: m.Name, value: m.Value, equal: m.IsEqual == nil || *m.IsEqual}
		if m.IsRegex {
			re, err := compileRegex(m.Value)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.value: %w", at, err))
				continue
			}
			c.re = re
		}
		if !c.matchesValue("") {
			allEmpty = false
		}
		ms = append(ms, c)
	}
	if len(errs) == 0 && allEmpty {
		errs = append(errs, errors.New("matchers: every one matches an empty value, so the silence would hold everything; add one that does not"))
	}
	var when *condition.Condition
	if in.When != "" {
		c, err := condition.Compile(in.When, condition.PolicyEnv{})
		if err != nil {
			errs = append(errs, fmt.Errorf("when: %w", err))
		}
		when = c
	}
	return ms, when, errs
}

// Validate checks in as of now and fills its defaults: isEqual true, startsAt now when
// zero or past (as Alertmanager does), times in UTC. maxDuration bounds endsAt −
// startsAt. The error is a *ValidationError naming each field at fault.
func Validate(in *Input, now time.Time, maxDuration time.Duration) error {
	_, _, errs := compile(*in)
	for i := range in.Matchers {
		if in.Matchers[i].IsEqual == nil {
			in.Matchers[i].IsEqual = ptr(true)
		}
	}
	now = now.UTC()
	if in.StartsAt.IsZero() || in.StartsAt.Before(now) {
		in.StartsAt = now
	}
	in.StartsAt, in.EndsAt = in.StartsAt.UTC(), in.EndsAt.UTC()
	switch {
	case in.EndsAt.IsZero() || in.EndsAt.Year() <= 1:
		errs = append(errs, errors.New("endsAt: required (an RFC 3339 time)"))
	case !in.EndsAt.After(in.StartsAt):
		errs = append(errs, fmt.Errorf("endsAt: %s is not after startsAt %s", in.EndsAt.Format(time.RFC3339), in.StartsAt.Format(time.RFC3339)))
	case in.EndsAt.Sub(in.StartsAt) > maxDuration:
		errs = append(errs, fmt.Errorf("endsAt: more than silences.max_duration (%s) after startsAt", hours(maxDuration)))
	}
	in.CreatedBy, in.Comment = strings.TrimSpace(in.CreatedBy), strings.TrimSpace(in.Comment)
	errs = append(errs, text("createdBy", in.CreatedBy, MaxCreatedByBytes), text("comment", in.Comment, MaxCommentBytes))
	if err := errors.Join(errs...); err != nil {
		return &ValidationError{Err: err}
	}
	return nil
}

func text(name, v string, limit int) error {
	switch {
	case v == "":
		return fmt.Errorf("%s: required", name)
	case len(v) > limit:
		return fmt.Errorf("%s: %d bytes, at most %d", name, len(v), limit)
	}
	return nil
}

// hours writes a whole number of hours as Alertmanager's operators read them ("168h"),
// anything else as Go does.
func hours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func ptr[T any](v T) *T { return &v }
